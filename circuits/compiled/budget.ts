// The demo's function written in TypeScript: the server's balance, your signed change to it.
// `garblet-compile circuits/compiled/budget.ts` writes budget.bristol and budget.manifest.json
// beside it, which the server embeds; ts-sdk/test/compiled.test.mjs checks that they are what
// this source compiles to.
import { circuit, evaluator, garbler, int, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: { balance: garbler(uint(32)), change: evaluator(int(32)) },
    outputs: { after: { to: 'evaluator', type: int(34) }, overdrawn: 'both' },
  },
  ({ balance, change }) => {
    const after = balance.toInt().add(change);
    return { after, overdrawn: after.isNegative() };
  },
);
