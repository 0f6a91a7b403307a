// Press and hold to confirm (the SOS): the action runs only once the press has lasted the
// whole hold; letting go, leaving the button or a cancelled pointer before that does
// nothing. The count is shown while held (whole seconds left, rounded up) and the phone
// vibrates at the start and each second, where it can. Keyboard: Space or Enter held
// down the same way.

export interface HoldOptions {
  holdMs: number;
  /** Whole seconds left while held (`null` when released or done). */
  onCount: (secondsLeft: number | null) => void;
  onDone: () => void;
  vibrate?: (pattern: number | number[]) => void;
  now?: () => number;
  schedule?: (fn: () => void, ms: number) => number;
  unschedule?: (handle: number) => void;
}

/** The hold's clock, without the DOM: `press`, `release`, and ticks from its own timer. */
export class Hold {
  private startedAt: number | null = null;
  private timer: number | null = null;
  private readonly now: () => number;
  private readonly schedule: (fn: () => void, ms: number) => number;
  private readonly unschedule: (handle: number) => void;

  constructor(private readonly options: HoldOptions) {
    this.now = options.now ?? (() => performance.now());
    this.schedule = options.schedule ?? ((fn, ms) => window.setTimeout(fn, ms));
    this.unschedule = options.unschedule ?? ((handle) => window.clearTimeout(handle));
  }

  get holding(): boolean {
    return this.startedAt !== null;
  }

  press(): void {
    if (this.startedAt !== null) return;
    this.startedAt = this.now();
    this.options.vibrate?.(60);
    this.tick();
  }

  release(): void {
    if (this.startedAt === null) return;
    this.startedAt = null;
    if (this.timer !== null) this.unschedule(this.timer);
    this.timer = null;
    this.options.onCount(null);
  }

  private tick(): void {
    if (this.startedAt === null) return;
    const left = this.options.holdMs - (this.now() - this.startedAt);
    if (left <= 0) {
      this.startedAt = null;
      this.timer = null;
      this.options.onCount(null);
      this.options.vibrate?.([200, 100, 200]);
      this.options.onDone();
      return;
    }
    const seconds = Math.ceil(left / 1000);
    this.options.onCount(seconds);
    const toNextSecond = left - (seconds - 1) * 1000;
    this.timer = this.schedule(() => {
      if (this.startedAt !== null && this.options.holdMs - (this.now() - this.startedAt) > 0) this.options.vibrate?.(30);
      this.tick();
    }, Math.max(10, Math.min(toNextSecond, left)));
  }
}

/** Ties a `Hold` to a button's pointer and keyboard events. */
export function holdButton(button: HTMLButtonElement, hold: Hold): void {
  button.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    e.preventDefault();
    button.setPointerCapture?.(e.pointerId);
    hold.press();
  });
  for (const name of ['pointerup', 'pointercancel', 'lostpointercapture', 'blur'] as const) {
    button.addEventListener(name, () => hold.release());
  }
  // A long press must not open the phone's context menu or select text.
  button.addEventListener('contextmenu', (e) => e.preventDefault());
  button.addEventListener('keydown', (e) => {
    if ((e.key === ' ' || e.key === 'Enter') && !e.repeat) {
      e.preventDefault();
      hold.press();
    }
  });
  button.addEventListener('keyup', (e) => {
    if (e.key === ' ' || e.key === 'Enter') hold.release();
  });
  // A click (a tap, or assistive technology's activation) alone sends nothing.
  button.addEventListener('click', (e) => e.preventDefault());
}
