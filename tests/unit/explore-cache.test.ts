import { describe, expect, it } from 'vitest';
import { cacheKey, createAnswerCache } from '../../src/explore/cache.ts';

describe('answer cache', () => {
  const base = { question: 'how many customers', role: 'svc-analyst', user: 'ana', model: 'svc-chat' };

  it('keys on question, role, user and model, so answers never cross users', () => {
    expect(cacheKey(base)).toBe(cacheKey({ ...base, question: '  how many customers ' }));
    expect(cacheKey(base)).not.toBe(cacheKey({ ...base, user: 'bob' }));
    expect(cacheKey(base)).not.toBe(cacheKey({ ...base, role: 'svc-user' }));
    expect(cacheKey(base)).not.toBe(cacheKey({ ...base, model: 'other' }));
    expect(cacheKey(base)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('expires entries after the TTL', () => {
    let t = 0;
    const cache = createAnswerCache<string>({ size: 10, ttlSeconds: 300, now: () => t });
    cache.set('k', 'v');
    t = 299_999;
    expect(cache.get('k')).toBe('v');
    t = 300_000;
    expect(cache.get('k')).toBeUndefined();
  });

  it('is bounded by bytes as well as by count, least recently used first; an answer larger than the budget is not kept', () => {
    const cache = createAnswerCache<string>({ size: 100, ttlSeconds: 60, maxBytes: 250 });
    cache.set('a', 'x'.repeat(98)); // 100 bytes as JSON
    cache.set('b', 'x'.repeat(98));
    cache.get('a');
    cache.set('c', 'x'.repeat(98));
    expect([cache.get('a'), cache.get('b'), cache.get('c')].map((v) => v?.length)).toEqual([98, undefined, 98]);
    expect(cache.bytes).toBe(200);
    cache.set('huge', 'x'.repeat(1000));
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.size).toBe(2);
  });

  it('evicts the least recently used entry beyond its size', () => {
    const cache = createAnswerCache<number>({ size: 2, ttlSeconds: 60 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
  });

  it('stores nothing when its size or TTL is zero', () => {
    const off = createAnswerCache<number>({ size: 0, ttlSeconds: 60 });
    off.set('a', 1);
    expect(off.get('a')).toBeUndefined();
  });
});
