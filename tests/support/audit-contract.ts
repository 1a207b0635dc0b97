import { createHash, generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  appendAudit,
  canonicalJson,
  exportChain,
  hashOf,
  pruneChain,
  signCheckpoint,
  verifyChain,
  type ChainedRecord,
} from '../../src/platform/audit/index.ts';
import { migratePlatform, type Database, type Sql } from '../../src/platform/db/index.ts';

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

export function auditChainContract(label: string, open: () => Promise<Opened>) {
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
      // Rewrite every record with valid hashes, head included: only the outside anchor can tell.
      const records = await o.db.query<ChainedRecord>(`SELECT * FROM audit_records ORDER BY seq`);
      let prev = '0'.repeat(64);
      for (const r of records) {
        const detail = r.seq === 3 ? { ...r.detail, question: 'rewritten' } : r.detail;
        const hash = hashOf({ ...r, detail, prev_hash: prev });
        await o.db.query(`UPDATE audit_records SET detail = $2::jsonb, prev_hash = $3, hash = $4 WHERE seq = $1`, [
          r.seq,
          JSON.stringify(detail),
          prev,
          hash,
        ]);
        prev = hash;
      }
      await o.db.query(`UPDATE audit_head SET hash = $1`, [prev]);
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
  });
}
