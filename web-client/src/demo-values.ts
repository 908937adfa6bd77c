/**
 * Publicly known demo data that the server's default configuration (server/src/serve/default.toml)
 * also holds. A real server's values are secret; the page knows these only so that the demos can
 * offer a near match. The e2e tests check that both copies agree.
 */

/** The `hamming` services' enrolled iris code: a 900-bit integer, bit i = ring ⌊i/60⌋, angle i mod 60. */
export const ENROLLED_IRIS_HEX =
  '0xe7f1818c703f1c1e3f181c0f03f1c063e180e1f01c78603c080e3f018e3e0784c0e3f000e7e0f8ee1e398c0f7e0f0fe31f1cc1ffb0e0fe31e0fc3ff80c67ff0c0fc33f840779e0ccf8719ce0f31c00ef0219cf0f81cc0ff1807cf1383ce07f3087cf3187fe039f0c63be08e7f038f06e7';

/**
 * The FIPS-197 Appendix C.1 example: key, plaintext and ciphertext. The server holds this key only
 * when started with GARBLET_AES_KEY set to it; otherwise it draws a random key at start-up.
 */
export const FIPS197 = {
  key: '000102030405060708090a0b0c0d0e0f',
  plaintext: '00112233445566778899aabbccddeeff',
  ciphertext: '69c4e0d86a7b0430d8cdb78070b4c55a',
};
