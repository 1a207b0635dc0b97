export function rowBytes(row: readonly unknown[]): number;
