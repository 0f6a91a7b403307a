import { describe, expect, it } from 'vitest';
import { ReplayClock, fromZonedInput, startOfDayBefore, toZonedInput, trackOf, typedBack } from '../src/replay';

describe('track', () => {
  it('keeps positioned messages, oldest first, by GPS time else message time', () => {
    const track = trackOf([
      { SentFromDevice: '2026-03-01T10:02:00Z', Position: { Latitude: 1, Longitude: 2 } },
      { SentFromDevice: '2026-03-01T10:00:00Z' },
      { SentFromDevice: '2026-03-01T10:05:00Z', Position: { Latitude: 3, Longitude: 4, GpsTimestamp: '2026-03-01T10:01:00Z' } },
      { ReceivedAtServer: '2026-03-01T10:03:00Z', Position: { Latitude: 5, Longitude: 6 } },
      { Position: { Latitude: 7, Longitude: 8 } },
    ]);
    expect(track.map((p) => [p.iso, p.lat])).toEqual([
      ['2026-03-01T10:01:00Z', 3],
      ['2026-03-01T10:02:00Z', 1],
      ['2026-03-01T10:03:00Z', 5],
    ]);
  });
});

describe('replay clock', () => {
  it('steps one position a second at 1x and sixty at 60x, and stops at the end', () => {
    const clock = new ReplayClock(100);
    clock.play();
    expect(clock.tick(400)).toBe(false);
    expect(clock.tick(600)).toBe(true);
    expect(clock.index).toBe(1);
    clock.setSpeed(60);
    clock.tick(1000);
    expect(clock.index).toBe(61);
    clock.tick(10_000);
    expect(clock.index).toBe(99);
    expect(clock.playing).toBe(false);
    expect(clock.tick(1000)).toBe(false);
  });
  it('pauses, seeks within bounds, and plays again from the start once at the end', () => {
    const clock = new ReplayClock(10);
    clock.setSpeed(4);
    clock.play();
    clock.tick(500);
    expect(clock.index).toBe(2);
    clock.pause();
    expect(clock.tick(5000)).toBe(false);
    clock.seek(42);
    expect(clock.index).toBe(9);
    clock.seek(-3);
    expect(clock.index).toBe(0);
    clock.seek(9);
    clock.play();
    expect(clock.index).toBe(0);
    expect(clock.playing).toBe(true);
  });
  it('a track of one position or none does not play', () => {
    for (const n of [0, 1]) {
      const clock = new ReplayClock(n);
      clock.play();
      expect(clock.playing).toBe(false);
      expect(clock.tick(5000)).toBe(false);
      expect(clock.index).toBe(0);
    }
  });
});

describe("the window's inputs in the profile's zone", () => {
  it('writes and reads wall times of the zone, across summer time', () => {
    const winter = Date.parse('2026-01-15T09:30:00Z');
    const summer = Date.parse('2026-07-15T09:30:00Z');
    expect(toZonedInput(winter, 'Europe/Paris')).toBe('2026-01-15T10:30');
    expect(toZonedInput(summer, 'Europe/Paris')).toBe('2026-07-15T11:30');
    expect(fromZonedInput('2026-01-15T10:30', 'Europe/Paris')).toBe(winter);
    expect(fromZonedInput('2026-07-15T11:30', 'Europe/Paris')).toBe(summer);
    expect(fromZonedInput('2026-07-15T05:30', 'America/New_York')).toBe(summer);
    expect(toZonedInput(summer, 'UTC')).toBe('2026-07-15T09:30');
  });
  it('the hour after a spring change and a bad value', () => {
    // 02:30 does not exist in Paris on 2026-03-29; 03:30 does (CEST, UTC+2).
    expect(fromZonedInput('2026-03-29T03:30', 'Europe/Paris')).toBe(Date.parse('2026-03-29T01:30:00Z'));
    expect(fromZonedInput('yesterday', 'Europe/Paris')).toBeNull();
    expect(fromZonedInput('', undefined)).toBeNull();
  });
});

describe('typed times shown back in the profile', () => {
  it("writes a typed window as the profile's culture does, in its zone", () => {
    // 09:30 in London on 2 March is 09:30 UTC; a French profile writes the day first.
    expect(typedBack('2026-03-02T09:30', 'Europe/London', { timeZone: 'Europe/London', culture: 'en-GB' })).toBe('2 Mar 2026, 09:30:00');
    expect(typedBack('2026-03-02T09:30', 'Europe/Paris', { timeZone: 'Europe/Paris', culture: 'fr-FR' })).toMatch(/^2 mars 2026/);
    expect(typedBack('', 'Europe/London')).toBe('');
    expect(typedBack('02/03/2026', 'Europe/London')).toBe('');
  });

  it('finds the start of a day some days back, in the zone', () => {
    // 00:30 on 2 March in Paris is still 1 March in UTC.
    const ms = Date.parse('2026-03-01T23:30:00Z');
    expect(startOfDayBefore(ms, 6, 'Europe/Paris')).toBe('2026-02-24T00:00');
    expect(startOfDayBefore(ms, 6, 'UTC')).toBe('2026-02-23T00:00');
    expect(startOfDayBefore(ms, 0, 'Europe/Paris')).toBe('2026-03-02T00:00');
  });
});
