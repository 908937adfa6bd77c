import { circuit, evaluator, uint } from 'garblet/circuit';

export default circuit(
  {
    // @ts-expect-error: an input needs an owner, which the types say too
    inputs: { secret: uint(32), guess: evaluator(uint(32)) }, // ← the error
    outputs: { equal: 'evaluator' },
  },
  ({ secret, guess }) => ({ equal: secret.eq(guess) }),
);
