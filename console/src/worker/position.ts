// Where the worker is, from the browser's Geolocation API while the app is open: the
// latest fix is kept (watchPosition) so an SOS goes at once with it; a refusal is kept
// too, so the page can say it plainly (the SOS still goes, without a position).
import type { OutgoingMessage } from './outbox';

export type LocationState = 'unknown' | 'on' | 'denied' | 'unavailable';

type Fix = NonNullable<OutgoingMessage['Position']>;

/** A fix this old or older is not sent as the current position. */
const FRESH_MS = 5 * 60_000;

export class Location {
  private fix: { at: number; position: Fix } | null = null;
  state: LocationState = 'unknown';
  onState: (state: LocationState) => void = () => undefined;

  start(): void {
    if (!('geolocation' in navigator)) {
      this.set('unavailable');
      return;
    }
    navigator.geolocation.watchPosition(
      (p) => this.took(p),
      (e) => this.set(e.code === e.PERMISSION_DENIED ? 'denied' : this.fix ? 'on' : 'unavailable'),
      { enableHighAccuracy: true, maximumAge: 30_000 },
    );
  }

  private set(state: LocationState): void {
    if (state === this.state) return;
    this.state = state;
    this.onState(state);
  }

  private took(p: GeolocationPosition): void {
    this.fix = {
      at: Date.now(),
      position: {
        Latitude: p.coords.latitude,
        Longitude: p.coords.longitude,
        Accuracy: String(Math.round(p.coords.accuracy)),
        GpsTimestamp: new Date(p.timestamp).toISOString(),
        LocationSource: 'Gps',
      },
    };
    this.set('on');
  }

  /**
   * The current position: the latest fix if fresh, else one asked for now, waiting at
   * most `waitMs`; undefined when there is none (refused, unavailable, too slow).
   */
  async current(waitMs = 1500): Promise<Fix | undefined> {
    if (this.fix && Date.now() - this.fix.at < FRESH_MS) return this.fix.position;
    if (this.state === 'denied' || !('geolocation' in navigator)) return undefined;
    return new Promise((resolve) => {
      const give = (): void => resolve(this.fix && Date.now() - this.fix.at < FRESH_MS ? this.fix.position : undefined);
      const timer = window.setTimeout(give, waitMs);
      navigator.geolocation.getCurrentPosition(
        (p) => {
          window.clearTimeout(timer);
          this.took(p);
          give();
        },
        (e) => {
          window.clearTimeout(timer);
          if (e.code === e.PERMISSION_DENIED) this.set('denied');
          give();
        },
        { enableHighAccuracy: true, maximumAge: 30_000, timeout: waitMs },
      );
    });
  }
}
