/**
 * Edges of serve's protobuf reader (`OtlpProtobufRecordReader`) and the generated decoders
 * (`otlpProtobufToRecords`) that random messages rarely reach: length prefixes written in more
 * bytes than needed or beyond 32 bits, the reader's shared name cache across requests, and what a
 * reader (one for serve's whole run) keeps from the requests it read.
 *
 * The length rule is protobufjs's own (`Reader#size`, which its `bytes`, `string` and
 * `stringVerify` read): a length is a varint of at most five bytes whose value is below 2^31;
 * anything else is refused as "invalid length encoding". Both readers must keep it for every
 * length-delimited field, strings included, so that they accept and refuse the same bodies.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { decodeOtlpProtobuf } from '../src/otlp/otlp-protobuf.js';
import { OtlpProtobufRecordReader } from '../src/otlp/otlp-protobuf-reader.js';
import { otlpProtobufToRecords } from '../src/otlp/otlp-protobuf-records.js';
import type { OtlpSignal } from '../src/otlp/otlp.js';
import { QWEN_CODE_READS } from '../src/profiles/qwen-code/reads.js';

const cat = (parts: readonly Uint8Array[]): Buffer => Buffer.concat(parts);
/** A varint of `n` (below 2^31) in exactly `bytes` bytes (padded with continuation bytes). */
function varint(n: number, bytes: number): Buffer {
  const out: number[] = [];
  for (let i = 0; i < bytes; i++) {
    const last = i === bytes - 1;
    out.push((n & 0x7f) | (last ? 0 : 0x80));
    n = Math.floor(n / 128);
  }
  return Buffer.from(out);
}
/** Bytes of the shortest varint of `n`. */
const varintBytes = (n: number): number => (n < 128 ? 1 : 1 + varintBytes(Math.floor(n / 128)));
/** A length-delimited field; its length in `lengthBytes` bytes (default: as few as needed). */
const len = (field: number, b: Uint8Array, lengthBytes = varintBytes(b.length)): Buffer => cat([Buffer.from([(field << 3) | 2]), varint(b.length, lengthBytes), b]);
const str = (field: number, s: string, lengthBytes?: number): Buffer => len(field, Buffer.from(s, 'utf8'), lengthBytes);

/** Request { ResourceX { ScopeX { record } } } */
const request = (record: Uint8Array): Buffer => len(1, len(2, len(2, record)));

function outcome(signal: OtlpSignal, body: Uint8Array): { generated: string; reader: string; readerProjected: string; json: string } {
  const run = (f: () => unknown): string => {
    try {
      return JSON.stringify(f());
    } catch {
      return 'refused';
    }
  };
  return {
    generated: run(() => otlpProtobufToRecords(signal, body)),
    reader: run(() => new OtlpProtobufRecordReader().read(signal, body)),
    readerProjected: run(() => new OtlpProtobufRecordReader(QWEN_CODE_READS).read(signal, body)),
    json: run(() => decodeOtlpProtobuf(signal, body)),
  };
}

/** Where a short ASCII string sits: names the reader caches, and strings it checks then skips. */
const PLACES: ReadonlyArray<[string, OtlpSignal, (lengthBytes: number) => Buffer]> = [
  ['span name', 'traces', (n) => request(str(5, 'qwen-code.tool', n))],
  ['span attribute key', 'traces', (n) => request(cat([str(5, 'qwen-code.tool'), len(9, cat([str(1, 'call_id', n), len(2, str(1, 'c1'))]))]))],
  ['span attribute value', 'traces', (n) => request(cat([str(5, 'qwen-code.tool'), len(9, cat([str(1, 'call_id'), len(2, str(1, 'c1', n))]))]))],
  ['log event name', 'logs', (n) => request(str(12, 'qwen-code.tool_call', n))],
  ['log severity text', 'logs', (n) => request(cat([str(12, 'qwen-code.tool_call'), str(3, 'INFO', n)]))],
  ['resource schema URL', 'traces', (n) => len(1, cat([str(3, 'https://x', n), len(2, len(2, str(5, 'qwen-code.tool')))]))],
  ['scope schema URL', 'logs', (n) => len(1, len(2, cat([str(3, 'https://x', n), len(2, str(12, 'qwen-code.tool_call'))])))],
];

describe('length prefixes: both readers keep protobufjs length rule for every field', () => {
  it.each(PLACES)('%s: a length in five bytes is read; in six to ten bytes it is refused by both', (_place, signal, body) => {
    const five = outcome(signal, body(5));
    expect(five.generated).not.toBe('refused');
    expect(five.reader).toBe(five.generated);
    expect(five.readerProjected).not.toBe('refused');
    for (const n of [6, 7, 10]) {
      const o = outcome(signal, body(n));
      expect(o, `${n}-byte length`).toStrictEqual({ generated: 'refused', reader: 'refused', readerProjected: 'refused', json: 'refused' });
    }
  });

  it('a string length of 2^32 + 14 in five bytes is refused, not read as 14 (no truncation to 32 bits)', () => {
    // 2^32 + 14 as a five-byte varint: 0x8e 0x80 0x80 0x80 0x10
    const name = cat([Buffer.from([(5 << 3) | 2, 0x8e, 0x80, 0x80, 0x80, 0x10]), Buffer.from('qwen-code.tool')]);
    const o = outcome('traces', request(name));
    expect(o).toStrictEqual({ generated: 'refused', reader: 'refused', readerProjected: 'refused', json: 'refused' });
  });
});

describe("the reader's name cache, shared by every reader", () => {
  it('names that fall in the same slot, read in turn by different readers, come back as written', () => {
    // Find two ASCII names of one length in the same cache slot (the cache hashes h = h*31 + c, 4096 slots).
    const slot = (s: string): number => {
      let h = s.length;
      for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
      return h & 4095;
    };
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; i < 100_000 && pair === undefined; i++) {
      const name = `tool.${i.toString(36).padStart(4, '0')}`;
      const other = seen.get(slot(name));
      if (other !== undefined) pair = [other, name];
      else seen.set(slot(name), name);
    }
    expect(pair).toBeDefined();
    const [a, b] = pair!;
    const names = (s: string) => new OtlpProtobufRecordReader().read('traces', request(cat([str(5, s), len(9, cat([str(1, s), len(2, str(1, 'v'))]))]))).spans.map((x) => [x.name, Object.keys(x.attributes)]);
    for (const s of [a, b, a, b, b, a]) expect(names(s)).toStrictEqual([[s, [s]]]);
  });
});

describe('what a reader keeps between requests', () => {
  it('64 requests with a 1 MiB scope name each (half of them refused after the name): the names are not held', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const reader = new OtlpProtobufRecordReader(QWEN_CODE_READS);
    gc();
    const before = process.memoryUsage().heapUsed;
    let refused = 0;
    for (let i = 0; i < 64; i++) {
      const name = Buffer.alloc(1024 * 1024, 0x61);
      name.write(String(i).padStart(4, '0'));
      // ScopeSpans { scope { name }, spans: [ {} ] }, or a span that ends inside a field (refused)
      const record = i % 2 === 0 ? len(2, new Uint8Array()) : Buffer.from([0x12, 0x01, 0x2a]);
      try {
        reader.read('traces', len(1, len(2, cat([len(1, len(1, name)), record]))));
      } catch {
        refused += 1;
      }
    }
    gc();
    const held = process.memoryUsage().heapUsed - before;
    expect(refused).toBe(32);
    // 64 MiB of names went through; a reader may keep a few small scope objects, not the names
    expect(held).toBeLessThan(8 * 1024 * 1024);
  });
});

describe('an attribute named __proto__ is data, on every path', () => {
  const varint = (n: number): Buffer => {
    const o: number[] = [];
    while (n > 127) {
      o.push((n & 127) | 128);
      n >>>= 7;
    }
    o.push(n);
    return Buffer.from(o);
  };
  const field = (f: number, b: Uint8Array): Buffer => cat([Buffer.from([(f << 3) | 2]), varint(b.length), b]);
  const text = (f: number, s: string): Buffer => field(f, Buffer.from(s));
  // LogRecord { attributes: [ { __proto__: { kvlist: { event.name: qwen-code.tool_call } } }, { call_id: c1 } ] }
  const protoKv = cat([text(1, '__proto__'), field(2, field(6, field(1, cat([text(1, 'event.name'), field(2, text(1, 'qwen-code.tool_call'))]))))]);
  const log = cat([field(6, protoKv), field(6, cat([text(1, 'call_id'), field(2, text(1, 'c1'))]))]);
  const body = field(1, field(2, field(2, log)));
  // the same record with its body field twice: the reader hands it to the generated decoder (merge)
  const bodyTwice = field(1, field(2, field(2, cat([log, field(5, text(1, 'a')), field(5, text(1, 'b'))]))));

  it('the generated decoders keep it as an own key: no attribute is read through a replaced prototype', () => {
    const attrs = otlpProtobufToRecords('logs', body).logs[0]?.attributes ?? {};
    expect(Object.keys(attrs)).toEqual(['__proto__', 'call_id']);
    expect(Object.getPrototypeOf(attrs)).toBe(Object.prototype);
    expect(attrs['event.name']).toBeUndefined();
  });

  it("serve's reader and the decoders agree: the record has no event.name, so the qwen-code profile keeps nothing", () => {
    expect(new OtlpProtobufRecordReader(QWEN_CODE_READS).read('logs', body).logs).toHaveLength(0);
    expect(new OtlpProtobufRecordReader(QWEN_CODE_READS).read('logs', bodyTwice).logs).toHaveLength(0);
    const whole = new OtlpProtobufRecordReader(undefined).read('logs', body).logs[0]?.attributes ?? {};
    expect(Object.keys(whole)).toEqual(['__proto__', 'call_id']);
    expect(whole['event.name']).toBeUndefined();
  });
});
