import { randomInt } from 'node:crypto';

// MLflow names unnamed runs and logged models "<adjective>-<noun>-<number>"; these words are our own.
const ADJECTIVES = [
  'amber',
  'brave',
  'calm',
  'clever',
  'bold',
  'bright',
  'gentle',
  'keen',
  'lucky',
  'merry',
  'quiet',
  'rapid',
  'silver',
  'steady',
  'sunny',
  'swift',
  'tidy',
  'vivid',
  'wise',
  'zesty',
];
const NOUNS = [
  'otter',
  'falcon',
  'maple',
  'comet',
  'river',
  'badger',
  'cedar',
  'harbor',
  'lynx',
  'meadow',
  'orca',
  'pebble',
  'quartz',
  'robin',
  'summit',
  'tiger',
  'willow',
  'yak',
  'zebra',
  'heron',
];

export function randomName(): string {
  return `${ADJECTIVES[randomInt(ADJECTIVES.length)]}-${NOUNS[randomInt(NOUNS.length)]}-${randomInt(1000)}`;
}
