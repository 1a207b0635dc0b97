import { describe, expect, it } from 'vitest';
import { ConfigError, flag, int, list, loadConfig, loadPlatformConfig, port, str } from '../../src/platform/config.ts';

describe('configuration', () => {
  const shape = { PORT: int(8080, 1), ENABLED: flag(true), ROLES: list(['a', 'b']), NAME: str('svc') };

  it('uses the defaults when nothing is set', () => {
    expect(loadConfig(shape, {})).toEqual({ PORT: 8080, ENABLED: true, ROLES: ['a', 'b'], NAME: 'svc' });
  });

  it('prefers SVC_<NAME>, falls back to <NAME>, and treats an empty value as unset', () => {
    expect(loadConfig(shape, { SVC_PORT: '1', PORT: '2' }).PORT).toBe(1);
    expect(loadConfig(shape, { PORT: '2' }).PORT).toBe(2);
    expect(loadConfig(shape, { SVC_PORT: '', PORT: '3' }).PORT).toBe(3);
    expect(loadConfig(shape, { SVC_NAME: '   ' }).NAME).toBe('svc');
  });

  it('parses flags strictly: "false" is false', () => {
    expect(loadConfig(shape, { SVC_ENABLED: 'false' }).ENABLED).toBe(false);
    expect(loadConfig(shape, { SVC_ENABLED: 'OFF' }).ENABLED).toBe(false);
    expect(() => loadConfig(shape, { SVC_ENABLED: 'maybe' })).toThrow(ConfigError);
  });

  it('splits lists on commas', () => {
    expect(loadConfig(shape, { ROLES: ' x, y ,,z' }).ROLES).toEqual(['x', 'y', 'z']);
  });

  it('names every bad variable as it was set', () => {
    expect(() => loadConfig(shape, { SVC_PORT: 'eighty', ENABLED: 'perhaps' })).toThrow(
      /SVC_PORT="eighty": expected an integer >= 1; ENABLED="perhaps": expected true or false/,
    );
  });

  it('validates the platform settings', () => {
    expect(loadPlatformConfig({}).PG_HOST).toBeUndefined();
    expect(() => loadPlatformConfig({ SVC_OPA_URL: 'localhost:8181' })).toThrow(/SVC_OPA_URL/);
    expect(() => loadPlatformConfig({ SVC_LOG_LEVEL: 'loud' })).toThrow(/SVC_LOG_LEVEL/);
  });

  it.each([
    ['1', { listening: false }, 1],
    ['65535', { listening: false }, 65535],
    ['0', { listening: true }, 0],
  ])('takes port %s (%o)', (value, opts, expected) => {
    expect(loadConfig({ P_PORT: port(8080, opts) }, { SVC_P_PORT: value }).P_PORT).toBe(expected);
  });

  it.each([
    ['70000', { listening: true }, 'expected a port from 1 to 65535 (or 0 for any free port)'],
    ['-1', { listening: true }, 'expected a port from 1 to 65535 (or 0 for any free port)'],
    ['80.5', { listening: true }, 'expected a port from 1 to 65535 (or 0 for any free port)'],
    ['0', { listening: false }, 'expected a port from 1 to 65535'],
    ['65536', { listening: false }, 'expected a port from 1 to 65535'],
  ])('refuses port %s (%o), naming the setting', (value, opts, message) => {
    expect(() => loadConfig({ P_PORT: port(8080, opts) }, { SVC_P_PORT: value })).toThrow(`SVC_P_PORT="${value}": ${message}`);
  });
});
