// Import boundaries of src/: arrows run one way,
//   cli → hooks → replay/serve/report → otlp → otel → profiles → engine → core,
// and nothing imports cli. hosts (in-process host adapters: the AI SDK, pi) sits beside cli: it
// drives otel's guard and may format decisions with report/text; nothing below imports it. Each room
// lists the rooms it may NOT import (relative specifiers, resolved by how many `../` reach src/).
// `test/lint-boundaries.test.ts` proves the rule fires.

const ROOMS = ['core', 'engine', 'profiles', 'otel', 'otlp', 'replay', 'serve', 'report', 'hooks', 'cli', 'hosts'];

/** A regex matching a relative import, from a file `depth` folders below src/, of one of `rooms`. */
function roomImport(depth, rooms) {
  const up = depth === 0 ? '\\./' : `(\\.\\./){${depth}}`;
  return `^${up}(${rooms.join('|')})(/|\\.js$)`;
}

function forbid(room, rooms, extra = []) {
  const message = `src/${room} may not import ${rooms.join(', ')} (see README "Architecture")`;
  return [1, 2, 3].map((depth) => ({
    files: [depth === 1 ? `src/${room}/*.ts` : `src/${room}/${'*/'.repeat(depth - 1)}*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: roomImport(depth, rooms), message },
            ...extra,
          ],
        },
      ],
    },
  }));
}

const NO_OTEL_NO_NODE = [
  { group: ['@opentelemetry/*'], message: 'src/core is pure: nothing from OpenTelemetry' },
  { regex: '^node:', message: 'src/core is pure: nothing from Node' },
];
const NO_SDK = [{ group: ['@opentelemetry/*'], message: 'src/engine is SDK-free: clock and error reporting are injected' }];

export const boundaries = [
  ...forbid('core', ROOMS.filter((r) => r !== 'core'), NO_OTEL_NO_NODE),
  ...forbid('engine', ['profiles', 'otel', 'otlp', 'replay', 'serve', 'report', 'hooks', 'cli', 'hosts'], NO_SDK),
  ...forbid('profiles', ['otel', 'otlp', 'replay', 'serve', 'report', 'hooks', 'cli', 'hosts']),
  ...forbid('otel', ['otlp', 'replay', 'serve', 'report', 'hooks', 'cli', 'hosts']),
  ...forbid('otlp', ['replay', 'serve', 'report', 'hooks', 'cli', 'hosts']),
  ...forbid('replay', ['serve', 'report', 'hooks', 'cli', 'hosts']),
  ...forbid('report', ['serve', 'hooks', 'cli', 'hosts']),
  ...forbid('serve', ['hooks', 'cli', 'hosts']),
  ...forbid('hooks', ['cli', 'hosts']),
  ...forbid('hosts', ['otlp', 'replay', 'serve', 'hooks', 'cli']),
  {
    // The package entries: the root and ./core load no out-of-process code.
    files: ['src/index.ts', 'src/core.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^\\./(otlp|replay|serve|report|hooks|cli|hosts)(/|\\.js$)', message: 'the root entry loads no replay, serve, report, hook, CLI or host-adapter code' }] },
      ],
    },
  },
];
