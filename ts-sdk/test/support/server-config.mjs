/**
 * The test server's configuration, rendered from the values below so that the tests and the
 * server share one source of truth for the server's secret inputs.
 */

/** FIPS-197 Appendix C.1 key (and the key of the random-block tests). */
export const AES128_KEY = '000102030405060708090a0b0c0d0e0f';
/** FIPS-197 Appendix B (the worked "cipher example") key. */
export const AES128_APPENDIX_B_KEY = '2b7e151628aed2a6abf7158809cf4f3c';
/** FIPS-197 Appendix C.2 and C.3 keys. */
export const AES192_KEY = '000102030405060708090a0b0c0d0e0f1011121314151617';
export const AES256_KEY = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';

/** The server's operand `a` of each arithmetic service, as 64-bit two's complement. */
export const SERVER_OPERANDS = {
  add64: 0xfedcba9876543210n,
  sub64: 0x0123456789abcdefn,
  mult64: 0x9e3779b97f4a7c15n,
  // Negative, to exercise the signed division: -1000003.
  divide64: (1n << 64n) - 1000003n,
};

/** The server's side of the applications (services named as in the default configuration). */
export const APP_VALUES = {
  // 900 bits: an iris code.
  irisCode: 0x3a5f_0c91_d2e8_774b_19c6_a0f3_5e82_d4b7n * (1n << 772n) + 0x9d21_6e4f_0b73_c8a5_e1f2_6d09_47ba_3c18n,
  hammingThreshold: 300,
  dna: 'GCGTGGATGTGCTAGAATTTACGCCCTTCCTAACCG',
  text: 'the quick brown fox',
  protein: 'MVHLTPEEKSAVTALWGKVNVDEV',
  fortune: 1_500_000n,
  bids: [2998500n, 6360060n, 9430815n, 9586960n, 2721960n, 4746093n, 8056747n, 9236009n],
  records: [
    [10332n, 416512n],
    [11505n, 263730n],
    [20580n, 364545n],
    [22851n, 974459n],
  ],
  set: [26n, 145n, 295n, 300n, 317n, 373n, 378n, 469n],
};

const hex64 = (v) => `0x${v.toString(16).padStart(16, '0')}`;

/** An AES service; `security` the strongest mode it offers (the server's default: standard). */
const aesService = (name, bristol, key, security = 'standard') => `
[[service]]
name = "${name}"
circuit = { bristol = "${bristol}" }
security = "${security}"
inputs = [
  { name = "key", party = "garbler", encoding = "bytes", value = { hex = "${key}" } },
  { name = "plaintext", party = "evaluator", encoding = "bytes" },
]
outputs = [{ name = "ciphertext", reveal = "evaluator", encoding = "bytes" }]
`;

const arithmeticService = (name, bristol, output, reveal = 'evaluator') => `
[[service]]
name = "${name}"
circuit = { bristol = "${bristol}" }
inputs = [
  { name = "a", party = "garbler", value = { hex = "${hex64(SERVER_OPERANDS[name])}" } },
  { name = "b", party = "evaluator" },
]
outputs = [{ name = "${output}", reveal = "${reveal}" }]
`;

const SERVICES = [
  // Offers cut-and-choose, as the default configuration's aes128 does; the others standard only.
  aesService('aes128', 'aes_128', AES128_KEY, 'cut-and-choose'),
  aesService('aes128_appendix_b', 'aes_128', AES128_APPENDIX_B_KEY),
  aesService('aes192', 'aes_192', AES192_KEY),
  aesService('aes256', 'aes_256', AES256_KEY),
  `
[[service]]
name = "sha256"
circuit = { bristol = "sha256" }
inputs = [
  { name = "block", party = "evaluator", encoding = "bytes" },
  { name = "chaining_value", party = "public", encoding = "bytes", value = { hex = "6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19" } },
]
outputs = [{ name = "digest", reveal = "evaluator", encoding = "bytes" }]
`,
  arithmeticService('add64', 'adder64', 'sum', 'both'),
  arithmeticService('sub64', 'sub64', 'difference'),
  arithmeticService('mult64', 'mult64', 'product'),
  arithmeticService('divide64', 'divide64', 'quotient'),
  `
[[service]]
name = "zero_equal"
circuit = { bristol = "zero_equal" }
inputs = [{ name = "a", party = "evaluator" }]
outputs = [{ name = "is_zero", reveal = "evaluator" }]
`,
  `
[[service]]
name = "hamming"
circuit = { builtin = "hamming", params = { n = 900 } }
security = "authenticated"
garbler_inputs = { x = { hex = "0x${APP_VALUES.irisCode.toString(16)}" } }

[[service]]
name = "hamming_threshold"
circuit = { builtin = "hamming_threshold", params = { n = 900, t = ${APP_VALUES.hammingThreshold} } }
garbler_inputs = { x = { hex = "0x${APP_VALUES.irisCode.toString(16)}" } }

[[service]]
name = "levenshtein"
circuit = { builtin = "levenshtein", params = { n = ${APP_VALUES.dna.length}, m = 10, sigma = 2 }, client_params = { m = { max = 200, length_of = "b" } } }
garbler_inputs = { a = { text = "${APP_VALUES.dna}" } }

[[service]]
name = "levenshtein_text"
circuit = { builtin = "levenshtein", params = { n = ${APP_VALUES.text.length}, m = 10, sigma = 8 }, client_params = { m = { max = 200, length_of = "b" } } }
garbler_inputs = { a = { text = "${APP_VALUES.text}" } }

[[service]]
name = "smith_waterman"
circuit = { builtin = "smith_waterman", params = { n = ${APP_VALUES.protein.length}, m = 10 }, client_params = { m = { max = 100, length_of = "protein" } } }
garbler_inputs = { protein = { text = "${APP_VALUES.protein}" } }

[[service]]
name = "aes128_bp"
circuit = { builtin = "aes128_bp", params = { blocks = 1 }, client_params = { blocks = { max = 64 } } }
garbler_inputs = { key = { hex = "${AES128_KEY}" } }

[[service]]
name = "millionaires"
circuit = { builtin = "millionaires", params = { n = 32 } }
garbler_inputs = { x = { decimal = ${APP_VALUES.fortune} } }

[[service]]
name = "minimum"
circuit = { builtin = "minimum", params = { na = ${APP_VALUES.bids.length}, nb = 1, w = 32 }, client_params = { nb = { max = 64 } } }
garbler_inputs = { values = { list = [${APP_VALUES.bids.join(', ')}] } }

[[service]]
name = "database_search"
circuit = { builtin = "database_search", params = { records = ${APP_VALUES.records.length}, kx = 32, kp = 32 } }
garbler_inputs = { records = { list = [${APP_VALUES.records.flat().join(', ')}] } }

[[service]]
name = "psi"
circuit = { builtin = "psi", params = { na = ${APP_VALUES.set.length}, nb = 1, n = 32 }, client_params = { nb = { max = 64 } } }
garbler_inputs = { set = { list = [${APP_VALUES.set.join(', ')}] } }
`,
  `
[[service]]
name = "synthetic"
circuit = { builtin = "synthetic", params = { width = 512 }, client_params = { and_gates = { max = 10_000_000_000 } } }
garbler_inputs = { garbler = { hex = "0x0" } }
`,
].join('');

/** Limits that keep a stuck test short; tests override single values. */
const DEFAULT_LIMITS = {
  max_sessions: 8,
  handshake_timeout_secs: 10,
  idle_timeout_secs: 20,
  shutdown_grace_secs: 1,
};

/** The TOML of a test server on a free port of 127.0.0.1, with `limits` over the defaults. */
export function renderConfig(limits = {}) {
  const lines = Object.entries({ ...DEFAULT_LIMITS, ...limits }).map(([k, v]) => `${k} = ${v}`);
  return `${SERVICES}
[server]
listen = "127.0.0.1:0"

[limits]
${lines.join('\n')}
`;
}
