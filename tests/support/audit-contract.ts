import { createHash, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  appendAudit,
  canonicalJson,
  createHeadSigner,
  exportChain,
  hashOf,
  headKey,
  HEADS_PREFIX,
  pruneChain,
  signCheckpoint,
  signHead,
  verifyChain,
  type ChainedRecord,
} from '../../src/platform/audit/index.ts';
import { migratePlatform, type Database, type Sql } from '../../src/platform/db/index.ts';
import { createLogger } from '../../src/platform/log.ts';
import { createFolderStore, readObject, type ObjectStore } from '../../src/platform/objects/index.ts';

// The audit chain's contract on one adapter: concurrent writers leave a gap-free chain that verifies, and `verify`
// names the exact record after each edit a database administrator could make by hand.
export type Opened = { db: Database; cleanup(): Promise<void> };

const keys = () => generateKeyPairSync('ed25519');

/** 20 writers at once, each appending 3 records (one rolled back in between), as services do. */
export async function writeConcurrently(db: Database, writers = 20, each = 3): Promise<void> {
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < each; i++) {
        await appendAudit(db, {
          service: 'test',
          action: 'write',
          actor: `writer-${w}`,
          detail: { writer: w, i, question: `what is ${w}.${i}?`, scores: [0.5, 1 / 3] },
        });
        if (i === 1) {
          // a writer whose transaction fails after appending leaves no seq behind
          await db
            .transaction(async (tx) => {
              await appendAudit(tx, { service: 'test', action: 'write', actor: `writer-${w}`, detail: { doomed: true } });
              throw new Error('rolled back');
            })
            .catch(() => undefined);
        }
      }
    }),
  );
}

// What an administrator can do with SQL alone.
export const tamper = {
  async changeField(db: Sql, seq: number) {
    await db.query(`UPDATE audit_records SET detail = jsonb_set(detail, '{question}', '"something else"') WHERE seq = $1`, [seq]);
  },
  async deleteRow(db: Sql, seq: number) {
    await db.query(`DELETE FROM audit_records WHERE seq = $1`, [seq]);
  },
  /** A forged record at `seq`, correctly hashed after the record before it (the encoding is public), later ones moved up. */
  async insertRow(db: Database, seq: number) {
    await db.transaction(async (tx) => {
      const [before] = await tx.query<ChainedRecord>(`SELECT * FROM audit_records WHERE seq = $1`, [seq - 1]);
      await tx.query(`UPDATE audit_records SET seq = -seq WHERE seq >= $1`, [seq]);
      await tx.query(`UPDATE audit_records SET seq = -seq + 1 WHERE seq < 0`);
      const forged = {
        seq,
        at: new Date(),
        service: 'test',
        action: 'write',
        actor: 'mallory',
        detail: { question: 'forged' },
        prev_hash: before!.hash,
      };
      await tx.query(
        `INSERT INTO audit_records (seq, at, service, action, actor, detail, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)`,
        [seq, forged.at, forged.service, forged.action, forged.actor, JSON.stringify(forged.detail), forged.prev_hash, hashOf(forged)],
      );
    });
  },
  /**
   * What the chain's hashes alone cannot show: record `seq` changed, then it and every record after it re-hashed
   * with the chain's own canonical hashing, and the head row moved to the new last hash.
   */
  async rewrite(db: Database, seq: number) {
    await db.transaction(async (tx) => {
      const records = await tx.query<ChainedRecord>(`SELECT * FROM audit_records WHERE seq >= $1 ORDER BY seq`, [seq]);
      let prev = records[0]!.prev_hash;
      for (const r of records) {
        const detail = r.seq === seq ? { ...r.detail, question: 'rewritten' } : r.detail;
        const hash = hashOf({ ...r, detail, prev_hash: prev });
        await tx.query(`UPDATE audit_records SET detail = $2::jsonb, prev_hash = $3, hash = $4 WHERE seq = $1`, [
          r.seq,
          JSON.stringify(detail),
          prev,
          hash,
        ]);
        prev = hash;
      }
      await tx.query(`UPDATE audit_head SET hash = $1`, [prev]);
    });
  },
  async swapPair(db: Database, seq: number) {
    await db.transaction(async (tx) => {
      await tx.query(`UPDATE audit_records SET seq = -seq WHERE seq IN ($1, $2)`, [seq, seq + 1]);
      await tx.query(`UPDATE audit_records SET seq = CASE WHEN seq = -$1::bigint THEN $2::bigint ELSE $1::bigint END WHERE seq < 0`, [
        seq,
        seq + 1,
      ]);
    });
  },
};

/** `headStore`: where the signed heads go (a fresh place each call); a folder when not given. */
export function auditChainContract(label: string, open: () => Promise<Opened>, opts: { headStore?: () => Promise<ObjectStore> } = {}) {
  describe(`audit chain (${label})`, () => {
    let o: Opened;
    beforeAll(async () => {
      o = await open();
      await migratePlatform(o.db);
    }, 60_000);
    afterAll(async () => o?.cleanup());
    // Each test starts from an empty chain.
    beforeEach(async () => {
      await o.db.exec(`TRUNCATE audit_records, audit_checkpoints; UPDATE audit_head SET seq = 0, hash = repeat('0', 64);`);
    });

    it('20 concurrent writers leave a gap-free chain that verifies, rolled-back writers included', async () => {
      await writeConcurrently(o.db);
      const seqs = (await o.db.query<{ seq: number }>(`SELECT seq FROM audit_records ORDER BY seq`)).map((r) => r.seq);
      expect(seqs).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
      const result = await verifyChain(o.db);
      expect(result).toMatchObject({ ok: true, checked: 60, from: 1, through: 60, head: { seq: 60 } });
    });

    it('hashes exactly the documented encoding, so an outside verifier can check an export on its own', async () => {
      await appendAudit(o.db, {
        service: 'test',
        action: 'write',
        actor: 'ada',
        detail: { z: 'é\u0000', a: [1, 2.5, null], n: { y: true, b: 'x' } },
        at: new Date('2026-11-24T10:00:00.123Z'),
      });
      const lines: string[] = [];
      await exportChain(o.db, (l) => void lines.push(l));
      const record = JSON.parse(lines[0]!);
      // Written here from the documentation alone (docs/audit.md), not with the code under test.
      const body =
        '{"action":"write","actor":"ada","at":"2026-11-24T10:00:00.123Z","detail":{"a":[1,2.5,null],"n":{"b":"x","y":true},"z":"é\uFFFD"},"service":"test"}';
      const expected = createHash('sha256')
        .update(`svc-audit-v1\n1\n${'0'.repeat(64)}\n${body}`, 'utf8')
        .digest('hex');
      expect(record).toMatchObject({ seq: 1, prev_hash: '0'.repeat(64), hash: expected, detail: { z: 'é\uFFFD' } });
      expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe('{"a":[{"c":2,"d":1}],"b":1}');
    });

    describe.each([
      ['a changed field', (db: Database) => tamper.changeField(db, 17), { seq: 17, kind: 'changed' }],
      ['a deleted row', (db: Database) => tamper.deleteRow(db, 17), { seq: 17, kind: 'removed' }],
      ['an inserted row', (db: Database) => tamper.insertRow(db, 17), { seq: 17, kind: 'inserted' }],
      ['a reordered pair', (db: Database) => tamper.swapPair(db, 17), { seq: 17, kind: 'reordered' }],
      ['the last row deleted', (db: Database) => tamper.deleteRow(db, 60), { seq: 60, kind: 'removed' }],
      ['the first row changed', (db: Database) => tamper.changeField(db, 1), { seq: 1, kind: 'changed' }],
    ] as const)('after %s', (_, edit, finding) => {
      it('verify names the exact record', async () => {
        await writeConcurrently(o.db);
        await edit(o.db);
        const result = await verifyChain(o.db);
        expect(result.ok).toBe(false);
        expect(result.finding).toMatchObject(finding);
        expect(result.finding!.message).toContain(String(finding.seq));
      });
    });

    it('--from starts at a record, trusting the one before it, and still finds a later edit', async () => {
      await writeConcurrently(o.db);
      await tamper.changeField(o.db, 5);
      expect(await verifyChain(o.db, { from: 10 })).toMatchObject({ ok: true, from: 10, checked: 51 });
      await tamper.changeField(o.db, 40);
      expect((await verifyChain(o.db, { from: 10 })).finding).toMatchObject({ seq: 40, kind: 'changed' });
    });

    it('an anchor kept from the head catches a chain rewritten from the start', async () => {
      await writeConcurrently(o.db, 4, 3);
      const [head] = await o.db.query<{ seq: number; hash: string }>(`SELECT seq, hash FROM audit_head`);
      // Rewrite record 3 and re-hash every record after it, head included: only the outside anchor can tell.
      await tamper.rewrite(o.db, 3);
      expect((await verifyChain(o.db)).ok).toBe(true);
      expect((await verifyChain(o.db, { anchors: [head!] })).finding).toMatchObject({ seq: head!.seq, kind: 'anchor' });
    });

    it('retention removes old records under a signed checkpoint; the rest still verifies, a forged checkpoint does not', async () => {
      await writeConcurrently(o.db);
      const { privateKey, publicKey } = keys();
      const checkpoint = await pruneChain(o.db, { through: 30, privateKey, publicKey, keyId: 'k1' });
      expect(checkpoint).toMatchObject({ through_seq: 30, removed: 30, key_id: 'k1' });
      expect(await verifyChain(o.db, { publicKey })).toMatchObject({ ok: true, from: 31, checked: 30 });
      expect((await verifyChain(o.db)).finding).toMatchObject({ seq: 30, kind: 'checkpoint' });

      // Cutting more without the key: a checkpoint signed by another key is refused.
      const other = keys();
      await o.db.query(`DELETE FROM audit_records WHERE seq <= 40`);
      const [last] = await o.db.query<{ hash: string }>(`SELECT hash FROM audit_records WHERE seq = 41`);
      const forged = signCheckpoint({ through_seq: 40, hash: last!.hash, removed: 10, at: new Date(), key_id: 'k1' }, other.privateKey);
      await o.db.query(
        `INSERT INTO audit_checkpoints (through_seq, hash, removed, at, key_id, signature) VALUES (40, $1, 10, $2, 'k1', $3)`,
        [forged.hash, forged.at, forged.signature],
      );
      expect((await verifyChain(o.db, { publicKey })).finding).toMatchObject({ seq: 40, kind: 'checkpoint' });
    });

    it('retention refuses to sign over a stretch that does not verify, and removes nothing', async () => {
      await writeConcurrently(o.db);
      await tamper.changeField(o.db, 12);
      const { privateKey, publicKey } = keys();
      await expect(pruneChain(o.db, { through: 30, privateKey, publicKey, keyId: 'k1' })).rejects.toThrow(/record 12 was changed/);
      expect((await o.db.query(`SELECT count(*)::int AS n FROM audit_records`))[0]).toEqual({ n: 60 });
    });

    it('records deleted from the start without a checkpoint are named', async () => {
      await writeConcurrently(o.db);
      await o.db.query(`DELETE FROM audit_records WHERE seq <= 5`);
      expect((await verifyChain(o.db)).finding).toMatchObject({ seq: 1, kind: 'removed', message: 'records 1 to 5 were removed' });
    });

    // A key the database never sees signs the head every N records into the object store: a chain re-hashed after
    // an edit, which the hashes alone cannot tell from the original, contradicts a signed head.
    describe('signed heads in the object store', () => {
      let dir: string;
      let store: ObjectStore;
      let key: { privateKey: KeyObject; publicKey: KeyObject };
      let clock: number;
      beforeEach(async () => {
        dir = await mkdtemp(join(tmpdir(), 'svc-audit-heads-'));
        store = opts.headStore ? await opts.headStore() : createFolderStore(dir);
        key = keys();
        clock = Date.parse('2026-11-27T12:00:00Z');
      });
      afterEach(() => rm(dir, { recursive: true, force: true }));

      const signer = (opts: { registry?: Registry; store?: ObjectStore } = {}) => {
        const s = createHeadSigner({
          db: o.db,
          store: opts.store ?? store,
          privateKey: key.privateKey,
          keyId: 'k1',
          every: 10,
          minutes: 5,
          logger: createLogger('audit', 'silent'),
          now: () => clock,
        });
        if (opts.registry) s.expose(opts.registry);
        return s;
      };
      const append = async (n: number) => {
        for (let i = 0; i < n; i++)
          await appendAudit(o.db, { service: 'test', action: 'write', actor: 'ada', detail: { question: `q${i}` } });
      };
      const verify = () => verifyChain(o.db, { publicKey: key.publicKey, heads: { store, every: 10 } });
      const signedSeqs = async (s: ObjectStore = store) => (await s.list(HEADS_PREFIX)).map((e) => Number(/(\d+)\.json$/.exec(e.key)![1]));
      const counted = async (registry: Registry) => (await registry.getSingleMetricAsString('svc_audit_heads_total')) ?? '';

      it('a head is signed every N records, and after M minutes when fewer came', async () => {
        const registry = new Registry();
        const s = signer({ registry });
        await append(25);
        await s.tick();
        expect(await signedSeqs()).toEqual([10, 20]);
        const head = JSON.parse((await readObject(store, headKey(20), 1 << 20))!.toString());
        const [r20] = await o.db.query<{ hash: string }>(`SELECT hash FROM audit_records WHERE seq = 20`);
        expect(head).toMatchObject({ seq: 20, from_seq: 11, hash: r20!.hash, key_id: 'k1' });
        expect(head.hashes).toHaveLength(10);

        await append(8);
        await s.tick();
        await s.tick();
        expect(await signedSeqs()).toEqual([10, 20, 30]);
        clock += 5 * 60_000;
        await s.tick();
        expect(await signedSeqs()).toEqual([10, 20, 30, 33]);
        await append(7);
        await s.tick();
        expect(await signedSeqs()).toEqual([10, 20, 30, 33, 40]);
        expect(await counted(registry)).toContain('svc_audit_heads_total{outcome="written"} 5');
        // a new process resumes after the newest head in the store
        await append(10);
        await signer().tick();
        expect(await signedSeqs()).toEqual([10, 20, 30, 33, 40, 50]);
      });

      it('an untouched chain verifies, and verify says how far the signed heads reach', async () => {
        await append(110);
        await signer().tick();
        await append(5);
        expect(await verify()).toMatchObject({ ok: true, checked: 115, signed: { heads: 11, through: 110 } });
      });

      it('a record rewritten and the chain re-hashed after it is named, with no anchor given', async () => {
        await append(110);
        await signer().tick();
        await tamper.rewrite(o.db, 5);
        expect((await verifyChain(o.db)).ok).toBe(true); // the hashes alone cannot tell
        const result = await verify();
        expect(result).toMatchObject({ ok: false, finding: { seq: 5, kind: 'rewritten' } });
        expect(result.finding!.message).toContain('record 5 was rewritten');
      });

      it.each([
        ['a changed field', (db: Database) => tamper.changeField(db, 17), { seq: 17, kind: 'changed' }],
        ['a deleted row', (db: Database) => tamper.deleteRow(db, 17), { seq: 17, kind: 'removed' }],
        ['an inserted row', (db: Database) => tamper.insertRow(db, 17), { seq: 17, kind: 'inserted' }],
        ['a reordered pair', (db: Database) => tamper.swapPair(db, 17), { seq: 17, kind: 'reordered' }],
      ] as const)('under signed heads, %s is still named as the hashes tell it', async (_, edit, finding) => {
        await append(60);
        await signer().tick();
        await edit(o.db);
        expect((await verify()).finding).toMatchObject(finding);
      });

      it('deleting the signed heads is no way out once the chain is longer than 2 x N', async () => {
        await append(20);
        expect(await verify()).toMatchObject({ ok: true, signed: { heads: 0, through: 0 } }); // not due yet
        await append(90);
        await signer().tick();
        await store.delete(HEADS_PREFIX);
        await tamper.rewrite(o.db, 5);
        expect((await verify()).finding).toMatchObject({ seq: 1, kind: 'unsigned', message: expect.stringContaining('records 1 to 110') });
      });

      it('deleting the newest heads leaves at most 2 x N records unsigned', async () => {
        await append(110);
        await signer().tick();
        for (const seq of [60, 70, 80, 90, 100, 110]) await store.delete(headKey(seq));
        await tamper.rewrite(o.db, 75);
        expect((await verify()).finding).toMatchObject({ seq: 51, kind: 'unsigned' });
      });

      it('retention under signed heads: the records kept still verify against them', async () => {
        await append(110);
        await signer().tick();
        await pruneChain(o.db, { through: 55, privateKey: key.privateKey, publicKey: key.publicKey, keyId: 'k1' });
        expect(await verify()).toMatchObject({ ok: true, from: 56, checked: 55, signed: { heads: 6, through: 110 } });
        await tamper.rewrite(o.db, 57);
        expect((await verify()).finding).toMatchObject({ seq: 57, kind: 'rewritten' });
      });

      it('records cut from the end under a signed head are named', async () => {
        await append(110);
        await signer().tick();
        await o.db.query(`DELETE FROM audit_records WHERE seq > 100`);
        await o.db.query(`UPDATE audit_head SET seq = 100, hash = (SELECT hash FROM audit_records WHERE seq = 100)`);
        expect((await verifyChain(o.db)).ok).toBe(true);
        expect((await verify()).finding).toMatchObject({
          seq: 101,
          kind: 'removed',
          message: expect.stringContaining('records 101 to 110'),
        });
      });

      it('a head not signed by the key, or not a head at all, is refused', async () => {
        await append(20);
        await signer().tick();
        const genuine = JSON.parse((await readObject(store, headKey(20), 1 << 20))!.toString());
        const { signature: _, ...fields } = genuine;
        const forged = signHead(fields, keys().privateKey);
        await store.put(headKey(20), Buffer.from(JSON.stringify(forged)));
        expect((await verify()).finding).toMatchObject({ seq: 20, kind: 'head', message: expect.stringContaining('not signed by') });
        await store.put(headKey(10), Buffer.from('not json'));
        expect((await verify()).finding).toMatchObject({ seq: 10, kind: 'head', message: expect.stringContaining('not a signed head') });
        expect((await verifyChain(o.db, { heads: { store, every: 10 } })).finding).toMatchObject({ kind: 'head' }); // no public key
      });

      it('an object planted past the end of the chain is named as no head, not as records removed', async () => {
        await append(20);
        await signer().tick();
        await store.put(headKey(999), Buffer.from('{}'));
        expect((await verify()).finding).toMatchObject({ seq: 999, kind: 'head' });
      });

      it('the signer signs nothing over a stretch that does not verify, and counts it', async () => {
        const registry = new Registry();
        const s = signer({ registry });
        await append(15);
        await s.tick();
        await tamper.changeField(o.db, 13);
        await append(5);
        await s.tick();
        await s.tick(); // told once, not at every look
        expect(await signedSeqs()).toEqual([10]);
        expect(await counted(registry)).toContain('svc_audit_heads_total{outcome="refused"} 1');
      });

      it('a head the store cannot take is counted and written at the next look', async () => {
        const registry = new Registry();
        const blocked = join(dir, 'blocked');
        await writeFile(blocked, 'a file where the store needs a folder');
        const s = signer({ registry, store: createFolderStore(blocked) });
        await append(10);
        await s.tick();
        expect(await counted(registry)).toContain('svc_audit_heads_total{outcome="failed"} 1');
        await rm(blocked);
        await s.tick();
        expect(await signedSeqs(createFolderStore(blocked))).toEqual([10]);
        expect(await counted(registry)).toContain('svc_audit_heads_total{outcome="written"} 1');
      });
    });
  });
}
