// Unpacks a tarball that PGlite wrote (dumpDataDir: files and folders) into a folder as a stream, through tar-fs:
// read whole, a 70 MB cluster stayed in memory as garbage until a collection that an idle worker never runs. Only
// files and folders are written (tar-fs keeps every name inside the folder); a broken tarball rejects, and the
// caller starts the cluster anew.
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import tarFs from 'tar-fs';

export function untarInto(file, folder) {
  const other = (_name, header) => header.type !== 'file' && header.type !== 'directory';
  return pipeline(createReadStream(file), tarFs.extract(folder, { ignore: other }));
}
