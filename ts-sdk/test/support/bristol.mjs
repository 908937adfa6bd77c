// A plaintext evaluator of Bristol Fashion text, for checking compiled circuits: the gates the
// compiler writes (XOR, AND, INV, EQ, EQW), inputs as the first wires and outputs as the last.

/** Parses `text` once; `run(inputs)` takes one bigint a Bristol input (bit i = wire i of it) and returns one per output. */
export function bristolEvaluator(text) {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  const [gates, wires] = lines[0].split(/\s+/).map(Number);
  const [, ...inputs] = lines[1].split(/\s+/).map(Number);
  const [, ...outputs] = lines[2].split(/\s+/).map(Number);
  const body = lines.slice(3).map((l) => l.split(/\s+/));
  if (body.length !== gates) throw new Error(`${body.length} gate lines; the header says ${gates}`);
  const ops = body.map((t) => {
    const nin = Number(t[0]);
    const ins = t.slice(2, 2 + nin).map(Number);
    return { op: t[t.length - 1], ins, out: Number(t[2 + nin]) };
  });
  return {
    inputs,
    outputs,
    run(values) {
      if (values.length !== inputs.length) throw new Error(`${inputs.length} inputs, ${values.length} given`);
      const w = new Uint8Array(wires).fill(2);
      let k = 0;
      inputs.forEach((width, i) => {
        for (let b = 0; b < width; b++) w[k++] = Number((values[i] >> BigInt(b)) & 1n);
      });
      for (const { op, ins, out } of ops) {
        const read = (x) => {
          if (w[x] === 2) throw new Error(`wire ${x} read before it is assigned`);
          return w[x];
        };
        if (w[out] !== 2) throw new Error(`wire ${out} assigned twice`);
        if (op === 'XOR') w[out] = read(ins[0]) ^ read(ins[1]);
        else if (op === 'AND') w[out] = read(ins[0]) & read(ins[1]);
        else if (op === 'INV') w[out] = read(ins[0]) ^ 1;
        else if (op === 'EQ') w[out] = ins[0];
        else if (op === 'EQW') w[out] = read(ins[0]);
        else throw new Error(`unknown gate ${op}`);
      }
      let at = wires - outputs.reduce((a, b) => a + b, 0);
      return outputs.map((width) => {
        let v = 0n;
        for (let b = 0; b < width; b++, at++) {
          if (w[at] === 2) throw new Error(`output wire ${at} is never assigned`);
          v |= BigInt(w[at]) << BigInt(b);
        }
        return v;
      });
    },
  };
}
