export function lowerThisThread(nice: number): void;
