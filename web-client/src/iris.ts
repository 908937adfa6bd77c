/**
 * Iris-code-like bit patterns: 900 bits as 15 rings × 60 angles, the way iris codes are drawn
 * unwrapped (Daugman's quantised Gabor phases look like blobs and stripes, not white noise).
 * Bit i is ring ⌊i/60⌋, angle i mod 60 — and wire i of the `hamming` services' input.
 */
import { h } from './dom';

export const RINGS = 15;
export const ANGLES = 60;
export const BITS = RINGS * ANGLES;

export type IrisBits = boolean[];

/** A random iris-like code: the sign of a few random low-frequency waves around the iris. */
export function randomIris(random: () => number = Math.random): IrisBits {
  const waves = Array.from({ length: 12 }, () => ({
    angular: 2 + Math.floor(random() * 14),
    radial: random() * 4 - 2,
    phase: random() * 2 * Math.PI,
    weight: 0.5 + random(),
  }));
  return Array.from({ length: BITS }, (_, i) => {
    const ring = Math.floor(i / ANGLES);
    const angle = i % ANGLES;
    const v = waves.reduce((sum, w) => sum + w.weight * Math.cos(2 * Math.PI * ((w.angular * angle) / ANGLES + (w.radial * ring) / RINGS) + w.phase), 0);
    return v > 0;
  });
}

/** A re-scan of the same eye: each bit flipped with probability `noise`. */
export function rescan(code: IrisBits, noise: number, random: () => number = Math.random): IrisBits {
  return code.map((bit) => (random() < noise ? !bit : bit));
}

/** As an integer in `0x` hex, bit i = wire i (how the server's configuration writes it). */
export function toHex(code: IrisBits): string {
  let v = 0n;
  code.forEach((bit, i) => {
    if (bit) v |= 1n << BigInt(i);
  });
  return '0x' + v.toString(16).padStart(BITS / 4, '0');
}

/** The inverse of `toHex`; undefined if the text is not a 900-bit hex integer. */
export function fromHex(text: string): IrisBits | undefined {
  const digits = text.replace(/\s+/g, '').replace(/^0x/i, '');
  if (!/^[0-9a-f]{1,225}$/i.test(digits)) return undefined;
  const v = BigInt('0x' + digits);
  return Array.from({ length: BITS }, (_, i) => ((v >> BigInt(i)) & 1n) === 1n);
}

const CELL = 10;
const INK = '#1d2733';
const PAPER = '#e9eef3';

/**
 * An editable iris code: the unwrapped strip (click or drag to flip bits) and the same bits
 * wrapped around a pupil.
 */
export class IrisEditor {
  readonly element: HTMLElement;
  private readonly strip = h('canvas', { width: ANGLES * CELL, height: RINGS * CELL, class: 'iris-strip', 'data-testid': 'iris-canvas', 'aria-label': 'your iris code: click or drag to flip bits' });
  private readonly eye = h('canvas', { width: 170, height: 170, class: 'iris-eye', 'aria-hidden': 'true' });
  private code: IrisBits;

  constructor(initial: IrisBits, private readonly onChange: (code: IrisBits) => void) {
    this.code = [...initial];
    this.element = h('div', { class: 'iris-editor' }, this.strip, this.eye);
    this.listen();
    this.draw();
  }

  get bits(): IrisBits {
    return [...this.code];
  }

  set(code: IrisBits): void {
    this.code = [...code];
    this.draw();
  }

  /** Pointer down flips a cell; dragging paints that cell's new value over the others. */
  private listen(): void {
    let paint: boolean | undefined;
    const cellAt = (ev: PointerEvent) => {
      const r = this.strip.getBoundingClientRect();
      const angle = Math.floor(((ev.clientX - r.left) / r.width) * ANGLES);
      const ring = Math.floor(((ev.clientY - r.top) / r.height) * RINGS);
      return angle >= 0 && angle < ANGLES && ring >= 0 && ring < RINGS ? ring * ANGLES + angle : undefined;
    };
    const apply = (i: number | undefined, value: boolean) => {
      if (i === undefined || this.code[i] === value) return;
      this.code[i] = value;
      this.draw();
      this.onChange(this.bits);
    };
    this.strip.addEventListener('pointerdown', (ev) => {
      const i = cellAt(ev);
      if (i === undefined) return;
      paint = !this.code[i];
      this.strip.setPointerCapture(ev.pointerId);
      apply(i, paint);
    });
    this.strip.addEventListener('pointermove', (ev) => paint !== undefined && apply(cellAt(ev), paint));
    const stop = () => (paint = undefined);
    this.strip.addEventListener('pointerup', stop);
    this.strip.addEventListener('pointercancel', stop);
  }

  private draw(): void {
    drawStrip(this.strip, this.code);
    drawEye(this.eye, this.code);
  }
}

function drawStrip(canvas: HTMLCanvasElement, code: IrisBits): void {
  const ctx = canvas.getContext('2d')!;
  ctx.fillStyle = PAPER;
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = INK;
  code.forEach((bit, i) => bit && ctx.fillRect((i % ANGLES) * CELL, Math.floor(i / ANGLES) * CELL, CELL, CELL));
}

/** The rings around a pupil: ring 0 innermost, angle 0 at the top, clockwise. */
function drawEye(canvas: HTMLCanvasElement, code: IrisBits): void {
  const ctx = canvas.getContext('2d')!;
  const c = canvas.width / 2;
  const inner = c * 0.36;
  const outer = c * 0.96;
  const ringWidth = (outer - inner) / RINGS;
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  code.forEach((bit, i) => {
    const ring = Math.floor(i / ANGLES);
    const a0 = ((i % ANGLES) / ANGLES) * 2 * Math.PI - Math.PI / 2;
    const a1 = a0 + (2 * Math.PI) / ANGLES + 0.004; // a hair of overlap hides seams
    ctx.beginPath();
    ctx.arc(c, c, inner + (ring + 1) * ringWidth, a0, a1);
    ctx.arc(c, c, inner + ring * ringWidth, a1, a0, true);
    ctx.fillStyle = bit ? INK : PAPER;
    ctx.fill();
  });
  ctx.beginPath();
  ctx.arc(c, c, inner, 0, 2 * Math.PI);
  ctx.fillStyle = '#05080c';
  ctx.fill();
}

/** The server's code stands in as a locked, blank strip and eye: the page never has it. */
export function lockedIris(): HTMLElement {
  return h(
    'div',
    { class: 'iris-editor' },
    h('div', { class: 'iris-locked', style: `width:${ANGLES * CELL}px;height:${RINGS * CELL}px` }, h('span', {}, 'stays on the server')),
    h('div', { class: 'iris-locked eye', style: 'width:170px;height:170px' }),
  );
}
