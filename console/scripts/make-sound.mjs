// Writes public/alert.wav: the two-tone chime that announces a new High or Warning alert.
// Generated rather than committed (nothing built is committed); 16 kHz, 16-bit mono, ~0.9 s.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const rate = 16000;
const tones = [
  [880, 0.18], [0, 0.06], [660, 0.18], [0, 0.06], [880, 0.18], [0, 0.06], [660, 0.18],
];
const samples = [];
for (const [freq, seconds] of tones) {
  const n = Math.round(rate * seconds);
  for (let i = 0; i < n; i++) {
    // A short attack and release so the tones do not click.
    const envelope = Math.min(1, i / 160, (n - i) / 400);
    samples.push(freq === 0 ? 0 : Math.sin((2 * Math.PI * freq * i) / rate) * 0.6 * envelope);
  }
}
const data = Buffer.alloc(samples.length * 2);
samples.forEach((s, i) => data.writeInt16LE(Math.round(s * 32767), i * 2));
const header = Buffer.alloc(44);
header.write('RIFF', 0);
header.writeUInt32LE(36 + data.length, 4);
header.write('WAVE', 8);
header.write('fmt ', 12);
header.writeUInt32LE(16, 16);
header.writeUInt16LE(1, 20); // PCM
header.writeUInt16LE(1, 22); // mono
header.writeUInt32LE(rate, 24);
header.writeUInt32LE(rate * 2, 28);
header.writeUInt16LE(2, 32);
header.writeUInt16LE(16, 34);
header.write('data', 36);
header.writeUInt32LE(data.length, 40);
const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'public', 'alert.wav');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, Buffer.concat([header, data]));
