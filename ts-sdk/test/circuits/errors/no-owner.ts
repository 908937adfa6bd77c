import { circuit, evaluator, uint } from 'garblet/circuit';

export default circuit(
  {
    // @ts-expect-error: an input needs an owner, which the types say too
    inputs: { secret: uint(32), guess: evaluator(uint(32)) }, // ← the error
    outputs: { equal: 'evaluator' },
  },
  // @ts-expect-error: without an owner, secret has no type to call eq on
  ({ secret, guess }) => ({ equal: secret.eq(guess) }),
);
