export function jsonText(value: unknown): string;
