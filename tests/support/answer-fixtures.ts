import { writePdf } from './pdf-writer.ts';

// Documents for the answer tests: a three-page PDF whose fog-horn sentence opens the chunk that starts page 3 (with
// 40-word chunks overlapping by 8: windows start at words 0, 32, 64, 96), and a note on who logs the horn.
export const ANSWER_ENV = { SVC_CHUNK_SIZE_TOKENS: '40', SVC_CHUNK_OVERLAP_TOKENS: '8' };

export const FOG_SENTENCE = 'The fog horn at Point Reyes sounds every thirty seconds.';
export const LEDGER_SENTENCE = 'Keepers of the Point Reyes light write the fog horn hours in a green ledger.';

const pageOf = (sentences: string[]) => {
  const words = sentences.join(' ').split(' ');
  return { lines: Array.from({ length: Math.ceil(words.length / 8) }, (_, i) => words.slice(i * 8, i * 8 + 8).join(' ')) };
};

/** 32 words on each of pages 1 and 2 (eight-word sentences), then page 3: eight words, the fog sentence, more. */
export function coastPdf(): Uint8Array {
  return writePdf([
    pageOf([
      'Walkers cross the dunes before the ranger station.',
      'Elk graze quietly across the northern grassland meadow.',
      'Oysters grow slowly inside the cold bay water.',
      'Hikers share narrow trails with careful mountain cyclists.',
    ]),
    pageOf([
      'Dairy farms cover the wide historic ranch lands.',
      'Whales migrate south along this coast every winter.',
      'Visitors watch elephant seals from the high bluffs.',
      'Cypress trees line the road toward the beach.',
    ]),
    pageOf([
      'Visitors may climb the tower on clear days.',
      FOG_SENTENCE,
      'Ships once relied on its lamp to pass the rocks safely.',
      'The keepers lived in small cottages by the cliff stairs.',
    ]),
  ]);
}

export const ledgerNote = () => new TextEncoder().encode(`${LEDGER_SENTENCE} They sign each entry.\n`);

/** The numbered sources of a chat request the answer made: number, filename, page and text of each. */
export function sourcesOf(body: any): { n: number; filename: string; page: number; text: string }[] {
  const user = String(body.messages.at(-1).content);
  const inner = /^<(sources-[0-9a-f]+)>\n([\s\S]*)\n<\/\1>/.exec(user);
  if (!inner) return [];
  return inner[2]!.split(/\n\n(?=\[\d+\] )/).map((block) => {
    const m = /^\[(\d+)\] (.+), page (\d+)\n([\s\S]*)$/.exec(block)!;
    return { n: Number(m[1]), filename: m[2]!, page: Number(m[3]), text: m[4]! };
  });
}

/** The value of a series in a metrics exposition, the one holding every label given (0 when absent). */
export function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text.split('\n').find((l) => (l.startsWith(`${name} `) || l.startsWith(`${name}{`)) && wanted.every((w) => l.includes(w)));
  return line ? Number(line.split(' ').at(-1)) : 0;
}
