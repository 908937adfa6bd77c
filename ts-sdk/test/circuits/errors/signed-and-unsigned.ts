import { circuit, evaluator, garbler, int, uint } from 'garblet/circuit';

export default circuit(
  {
    inputs: { balance: garbler(uint(16)), change: evaluator(int(16)) },
    outputs: { after: 'evaluator' },
  },
  // @ts-expect-error: the types catch this before the compiler does
  ({ balance, change }) => ({ after: balance.add(change) }), // ← the error
);
