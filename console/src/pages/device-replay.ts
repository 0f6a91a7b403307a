// A device's track over a chosen window, replayed on a map: the polyline of its
// positions, a marker stepping through them (play, pause, speed, a slider) and the time
// of the position shown. The window is typed in the profile's time zone.
import L from 'leaflet';
import { api, v2 } from '../api';
import { h } from '../dom';
import { t } from '../i18n';
import { formatDateTime } from '../format';
import { baseMap, removeMap } from '../map';
import { session } from '../session';
import { ReplayClock, SPEEDS, fromZonedInput, toZonedInput, trackOf, typedBack, type MessageWithPosition, type Speed, type TrackPoint } from '../replay';
import { usableZone } from '../format';

/** Most messages a replay reads (a window that holds more is cut at its start). */
const MAX_MESSAGES = 20_000;
const DAY = 24 * 3600_000;

export function replaySection(tc: string, deviceId: string, lastReport: () => string | null | undefined): { element: HTMLElement; close: () => void } {
  const zone = usableZone(session()?.TimeZoneId);
  const end = Date.parse(lastReport() ?? '') || Date.now();
  // The inputs hold whole minutes: the window's end is rounded up to include the last report.
  const endValue = toZonedInput(end + 60_000, zone);
  const from = h('input', { type: 'datetime-local', id: 'replay-from', required: true, 'data-testid': 'replay-from' });
  const to = h('input', { type: 'datetime-local', id: 'replay-to', required: true, 'data-testid': 'replay-to' });
  from.value = toZonedInput(end - DAY, zone);
  to.value = endValue;
  // The browser writes the inputs in its own locale: each is shown back as the profile writes dates.
  const fromBack = h('output', { for: 'replay-from', class: 'hint typed-back', 'data-testid': 'replay-from-shown' });
  const toBack = h('output', { for: 'replay-to', class: 'hint typed-back', 'data-testid': 'replay-to-shown' });
  const showBack = (): void => {
    fromBack.textContent = typedBack(from.value, zone);
    toBack.textContent = typedBack(to.value, zone);
  };
  from.addEventListener('input', showBack);
  to.addEventListener('input', showBack);
  showBack();
  const load = h('button', { type: 'submit' }, t('device.replay.load'));
  const message = h('p', { class: 'replay-message', role: 'status', 'data-testid': 'replay-message' });
  const form = h(
    'form',
    { class: 'replay-window', 'data-testid': 'replay-form' },
    h('label', { for: 'replay-from' }, t('device.replay.from')),
    from,
    fromBack,
    h('label', { for: 'replay-to' }, t('device.replay.to')),
    to,
    toBack,
    load,
    h('span', { class: 'hint' }, t('device.replay.zone', { zone: zone ?? Intl.DateTimeFormat().resolvedOptions().timeZone })),
  );

  const play = h('button', { type: 'button', 'data-testid': 'replay-play', disabled: true }, t('device.replay.play'));
  const speed = h(
    'select',
    { id: 'replay-speed', 'data-testid': 'replay-speed' },
    ...SPEEDS.map((s) => h('option', { value: String(s) }, t('device.replay.speedValue', { n: s }))),
  );
  const slider = h('input', { type: 'range', id: 'replay-slider', min: 0, max: 0, step: 1, value: 0, disabled: true, 'data-testid': 'replay-slider' });
  const at = h('output', { for: 'replay-slider', class: 'replay-time', 'data-testid': 'replay-time' }, t('devices.none'));
  const controls = h(
    'div',
    { class: 'replay-controls' },
    play,
    h('label', { for: 'replay-speed' }, t('device.replay.speed')),
    speed,
    h('label', { for: 'replay-slider' }, t('device.replay.position')),
    slider,
    at,
  );
  const mapBox = h('div', { class: 'replay-map', 'data-testid': 'replay-map' });
  const element = h(
    'section',
    { class: 'replay', 'aria-labelledby': 'replay-h' },
    h('h2', { id: 'replay-h' }, t('device.replay.heading')),
    form,
    message,
    controls,
    mapBox,
  );

  let map: L.Map | null = null;
  let line: L.Polyline | null = null;
  let marker: L.CircleMarker | null = null;
  let track: TrackPoint[] = [];
  let clock = new ReplayClock(0);
  let frame = 0;
  let last = 0;
  let closed = false;

  const show = (): void => {
    const point = track[clock.index];
    slider.value = String(clock.index);
    play.textContent = clock.playing ? t('device.replay.pause') : t('device.replay.play');
    play.dataset.playing = String(clock.playing);
    if (!point) {
      at.textContent = t('devices.none');
      slider.removeAttribute('aria-valuetext');
      return;
    }
    const when = formatDateTime(point.iso);
    at.textContent = t('device.replay.at', { time: when, n: clock.index + 1, count: track.length });
    at.dataset.index = String(clock.index);
    at.dataset.iso = point.iso;
    slider.setAttribute('aria-valuetext', when);
    marker?.setLatLng([point.lat, point.lon]);
  };

  const step = (time: number): void => {
    frame = 0;
    if (closed) return;
    const moved = clock.tick(time - last);
    last = time;
    if (moved || !clock.playing) show();
    if (clock.playing) frame = requestAnimationFrame(step);
  };
  const stop = (): void => {
    clock.pause();
    if (frame) cancelAnimationFrame(frame);
    frame = 0;
    show();
  };

  play.addEventListener('click', () => {
    if (clock.playing) {
      stop();
      return;
    }
    clock.play();
    show();
    last = performance.now();
    frame ||= requestAnimationFrame(step);
  });
  speed.addEventListener('change', () => clock.setSpeed(Number(speed.value) as Speed));
  slider.addEventListener('input', () => {
    clock.seek(Number(slider.value));
    show();
  });

  const draw = (): void => {
    map ??= baseMap(mapBox);
    line?.remove();
    marker?.remove();
    line = null;
    marker = null;
    if (track.length === 0) return;
    const points = track.map((p) => [p.lat, p.lon] as L.LatLngTuple);
    line = L.polyline(points, { color: '#0b57a4', weight: 3, className: 'replay-track' }).addTo(map);
    const first = points[0] as L.LatLngTuple;
    marker = L.circleMarker(first, { radius: 8, color: '#b00020', fillColor: '#b00020', fillOpacity: 0.9, className: 'replay-position' }).addTo(map);
    if (points.length > 1) map.fitBounds(line.getBounds(), { padding: [20, 20], maxZoom: 15 });
    else map.setView(first, 13);
  };

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const start = fromZonedInput(from.value, zone);
    const finish = fromZonedInput(to.value, zone);
    if (start === null || finish === null || start >= finish) {
      message.textContent = t('device.replay.badWindow');
      return;
    }
    stop();
    message.textContent = t('device.replay.loading');
    void (async () => {
      const messages: MessageWithPosition[] = [];
      let token: string | null = null;
      const path = `${v2(tc, 'devices', deviceId, 'momessages')}?fromDate=${encodeURIComponent(new Date(start).toISOString())}&toDate=${encodeURIComponent(new Date(finish).toISOString())}&pageSize=1000`;
      do {
        const got: { items: MessageWithPosition[]; next: string | null } = await api.page<MessageWithPosition>(path, token);
        messages.push(...got.items);
        token = got.next;
      } while (token && messages.length < MAX_MESSAGES && !closed);
      if (closed) return;
      track = trackOf(messages);
      clock = new ReplayClock(track.length);
      clock.setSpeed(Number(speed.value) as Speed);
      slider.max = String(clock.last);
      slider.disabled = track.length < 2;
      play.disabled = track.length < 2;
      message.textContent = track.length === 0 ? t('device.replay.empty') : t('device.replay.loaded', { n: track.length });
      element.dataset.points = String(track.length);
      draw();
      show();
    })().catch((err: unknown) => {
      message.textContent = t('devices.failed', { detail: err instanceof Error ? err.message : String(err) });
    });
  });

  return {
    element,
    close: () => {
      closed = true;
      if (frame) cancelAnimationFrame(frame);
      if (map) removeMap(map);
    },
  };
}
