export function untarInto(file: string, folder: string): Promise<void>;
