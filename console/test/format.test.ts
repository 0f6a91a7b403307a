import { describe, expect, it } from 'vitest';
import { formatAge, formatDateTime } from '../src/format';

describe('time formatting', () => {
  const now = Date.parse('2026-03-01T12:00:00Z');
  it('ages tick in seconds, minutes, hours and days', () => {
    expect(formatAge('2026-03-01T11:59:48Z', now)).toBe('12 s');
    expect(formatAge('2026-03-01T11:55:30Z', now)).toBe('4 min');
    expect(formatAge('2026-03-01T09:55:00Z', now)).toBe('2 h 5 min');
    expect(formatAge('2026-02-26T08:00:00Z', now)).toBe('3 d 4 h');
  });
  it('a time in the future or missing does not break', () => {
    expect(formatAge('2026-03-01T12:00:05Z', now)).toBe('0 s');
    expect(formatAge(null, now)).toBe('—');
    expect(formatAge('not a date', now)).toBe('—');
  });
  it("dates are in the profile's time zone and culture", () => {
    const iso = '2026-07-01T22:30:00Z';
    const paris = formatDateTime(iso, { timeZone: 'Europe/Paris', culture: 'fr-FR' });
    expect(paris).toContain('2 juil. 2026');
    expect(paris).toContain('00:30:00');
    const ny = formatDateTime(iso, { timeZone: 'America/New_York', culture: 'en-US' });
    expect(ny).toContain('Jul 1, 2026');
    expect(ny).toContain('6:30:00');
  });
  it('an unknown zone or culture falls back instead of throwing', () => {
    expect(formatDateTime('2026-07-01T22:30:00Z', { timeZone: 'Mars/Olympus', culture: '!!' })).toMatch(/2026/);
  });
});
