import { setGlobalErrorHandler } from '@opentelemetry/core';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** The SDK processor contract every guard processor meets. */
export interface ProcessorUnderTest {
  /** Feed one record the processor reads. */
  feed(): void;
  /** Feed garbage. */
  feedGarbage(): void;
  forceFlush(): Promise<void>;
  shutdown(): Promise<void>;
  /** How many decisions or records the guard produced so far. */
  produced(): number;
}

export function behavesLikeProcessor(name: string, factory: () => ProcessorUnderTest): void {
  describe(`${name} behaves like an OpenTelemetry processor`, () => {
    afterEach(() => setGlobalErrorHandler(() => undefined));

    it('forceFlush resolves', async () => {
      const p = factory();
      await expect(p.forceFlush()).resolves.toBeUndefined();
    });

    it('shutdown is idempotent and forceFlush after shutdown resolves', async () => {
      const p = factory();
      await p.shutdown();
      await expect(p.shutdown()).resolves.toBeUndefined();
      await expect(p.forceFlush()).resolves.toBeUndefined();
    });

    it('is a no-op after shutdown', async () => {
      const p = factory();
      await p.shutdown();
      const before = p.produced();
      p.feed();
      expect(p.produced()).toBe(before);
    });

    it('never throws into the host, and reports through the global error handler', () => {
      const handler = vi.fn();
      setGlobalErrorHandler(handler);
      const p = factory();
      expect(() => p.feedGarbage()).not.toThrow();
      expect(handler).toHaveBeenCalled();
    });
  });
}

