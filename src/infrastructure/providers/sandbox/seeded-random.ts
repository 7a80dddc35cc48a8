import { createHash } from 'node:crypto';

/**
 * A seeded pseudo-random generator (sfc32, 128-bit state) for the sandbox's deterministic
 * data: the same seed gives the same sequence on every machine and run. The state comes from
 * SHA-256 of the seed text, so unrelated seeds give unrelated sequences (a 32-bit generator
 * such as mulberry32 would make every seed an offset of one cycle, and ids of two employers
 * could meet). Not for secrets.
 */
export class SeededRandom {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: string) {
    const digest = createHash('sha256').update(seed).digest();
    this.a = digest.readUInt32LE(0);
    this.b = digest.readUInt32LE(4);
    this.c = digest.readUInt32LE(8);
    this.d = digest.readUInt32LE(12);
    // Mixes the first outputs away, as sfc32's authors advise.
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** An independent generator for a named part (e.g. one employee), stable whatever else is drawn. */
  static derive(seed: string, part: string): SeededRandom {
    return new SeededRandom(`${seed}\u0000${part}`);
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)];
  }

  /** One item, chosen with the given relative weights. */
  weighted<T>(choices: readonly (readonly [T, number])[]): T {
    const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
    let at = this.next() * total;
    for (const [value, weight] of choices) {
      at -= weight;
      if (at < 0) return value;
    }
    return choices[choices.length - 1][0];
  }

  digits(count: number): string {
    let text = '';
    for (let i = 0; i < count; i++) text += String(this.int(0, 9));
    return text;
  }

  /** A UUID in version 4 format (random bits from this generator). */
  uuid(): string {
    const hex = [0, 1, 2, 3].map(() => this.nextUint32().toString(16).padStart(8, '0')).join('');
    const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  }
}
