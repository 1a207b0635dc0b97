import { describe, expect, it } from 'vitest';
import { fromDatabaseError } from '../../src/tracker/db-errors.ts';
import { TrackerError } from '../../src/tracker/errors.ts';

const pgError = (code: string) => Object.assign(new Error(`pg ${code}`), { code, severity: 'ERROR' });

describe('database errors on the MLflow wire', () => {
  it.each([
    ['22021', 'INVALID_PARAMETER_VALUE', 400],
    ['22003', 'INVALID_PARAMETER_VALUE', 400],
    ['23503', 'INVALID_PARAMETER_VALUE', 400],
    ['40P01', 'TEMPORARILY_UNAVAILABLE', 503],
    ['40001', 'TEMPORARILY_UNAVAILABLE', 503],
  ])('SQLSTATE %s is %s (%i)', (state, code, status) => {
    const mapped = fromDatabaseError(pgError(state)) as TrackerError;
    expect(mapped).toBeInstanceOf(TrackerError);
    expect(mapped.code).toBe(code);
    expect(mapped.status).toBe(status);
  });

  it('a lost connection is TEMPORARILY_UNAVAILABLE, which the client retries', () => {
    const mapped = fromDatabaseError(Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' })) as TrackerError;
    expect(mapped.code).toBe('TEMPORARILY_UNAVAILABLE');
  });

  it('leaves anything else to the 500 mapper', () => {
    const other = new Error('boom');
    expect(fromDatabaseError(other)).toBe(other);
    expect(fromDatabaseError(pgError('42P01'))).toBeInstanceOf(Error);
    expect(fromDatabaseError(pgError('42P01'))).not.toBeInstanceOf(TrackerError);
  });
});
