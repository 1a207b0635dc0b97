import { MalformedDocumentError, UnsupportedFormatError } from './errors.ts';
import type { Deadline, ExtractLimits } from './limits.ts';
import { relationships, startTags, xmlReader, type XmlReader, type XmlVisitor } from './xml.ts';
import { openZip, type ZipPackage } from './zip.ts';
import { lookupTable } from '../../platform/lookup-table.ts';

// Stage two of recognising an Office upload, on the whole file: which OOXML package the zip holds is read from
// the package itself (the officeDocument relationship and the content type of that part), not from its name.

export type OfficeFormat = 'docx' | 'pptx' | 'xlsx';
export type OfficePackage = {
  zip: ZipPackage;
  format: OfficeFormat;
  main: string;
  /** The package's XML reader: one element budget for all its parts. */
  xml: XmlReader;
  /** Scans a part when it exists (false when it does not). */
  readPart(part: string, visitor: XmlVisitor): Promise<boolean>;
};

const OOXML = 'application/vnd.openxmlformats-officedocument.';
const MAIN_TYPES: Record<string, OfficeFormat> = lookupTable({
  [`${OOXML}wordprocessingml.document.main+xml`]: 'docx',
  [`${OOXML}wordprocessingml.template.main+xml`]: 'docx',
  'application/vnd.ms-word.document.macroenabled.main+xml': 'docx',
  'application/vnd.ms-word.template.macroenabledtemplate.main+xml': 'docx',
  [`${OOXML}presentationml.presentation.main+xml`]: 'pptx',
  [`${OOXML}presentationml.slideshow.main+xml`]: 'pptx',
  [`${OOXML}presentationml.template.main+xml`]: 'pptx',
  'application/vnd.ms-powerpoint.presentation.macroenabled.main+xml': 'pptx',
  'application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml': 'pptx',
  [`${OOXML}spreadsheetml.sheet.main+xml`]: 'xlsx',
  [`${OOXML}spreadsheetml.template.main+xml`]: 'xlsx',
  'application/vnd.ms-excel.sheet.macroenabled.main+xml': 'xlsx',
  'application/vnd.ms-excel.template.macroenabled.main+xml': 'xlsx',
});
const NAMED: Record<OfficeFormat, string> = { docx: 'a Word document', pptx: 'a PowerPoint presentation', xlsx: 'an Excel workbook' };
const MAIN_PART: Record<OfficeFormat, string> = { docx: 'word/document.xml', pptx: 'ppt/presentation.xml', xlsx: 'xl/workbook.xml' };

export async function openOfficePackage(
  bytes: Uint8Array,
  opts: { filename: string; claimed: OfficeFormat; limits: ExtractLimits; deadline: Deadline },
): Promise<OfficePackage> {
  const { filename, claimed } = opts;
  const zip = await openZip(bytes, opts);
  const xml = xmlReader(opts);
  const contentTypes = await zip.text('[Content_Types].xml');
  if (contentTypes === undefined) {
    const mimetype = zip.find('mimetype') && (await zip.text('mimetype'))?.trim();
    if (mimetype?.startsWith('application/vnd.oasis.opendocument')) {
      throw new UnsupportedFormatError(
        `${filename} is an OpenDocument file, not ${NAMED[claimed]}: save it as .${claimed} from the office application and upload it again.`,
      );
    }
    throw new MalformedDocumentError(
      `${filename} is a zip archive but not an Office Open XML package (it has no [Content_Types].xml): save it again as .${claimed} from the Office application and upload it again.`,
    );
  }

  const overrides = new Map(
    (await startTags(xml, contentTypes, '[Content_Types].xml', 'Override')).map((a) => [
      (a.PartName ?? '').replace(/^\//, '').toLowerCase(),
      (a.ContentType ?? '').toLowerCase(),
    ]),
  );
  const defaults = new Map(
    (await startTags(xml, contentTypes, '[Content_Types].xml', 'Default')).map((a) => [
      (a.Extension ?? '').toLowerCase(),
      (a.ContentType ?? '').toLowerCase(),
    ]),
  );
  const typeOf = (part: string) => overrides.get(part.toLowerCase()) ?? defaults.get(part.slice(part.lastIndexOf('.') + 1).toLowerCase());

  const packageRels = await zip.text('_rels/.rels');
  const declaredMain = packageRels
    ? (await relationships(xml, packageRels, '_rels/.rels', '')).find((r) => r.type === 'officeDocument' && !r.external)?.target
    : undefined;
  let main = declaredMain;
  let type = main ? typeOf(main) : undefined;
  if (!type || !MAIN_TYPES[type]) {
    // no usable package relationship: the first override with a main-document content type
    const found = [...overrides].find(([, t]) => MAIN_TYPES[t]);
    if (found) [main, type] = found;
  }
  if (type?.startsWith('application/vnd.ms-excel.sheet.binary')) {
    throw new UnsupportedFormatError(`${filename} is an Excel binary workbook (.xlsb): save it as .xlsx and upload it again.`);
  }
  const format = type ? MAIN_TYPES[type] : undefined;
  if (!format || !main) {
    throw new MalformedDocumentError(
      `${filename} is a zip archive but not an Office Open XML package of a known kind (no Word, PowerPoint or Excel main part is declared): save it again as .${claimed} and upload it again.`,
    );
  }
  if (format !== claimed) {
    throw new MalformedDocumentError(
      `${filename} holds ${NAMED[format]}, not ${NAMED[claimed]}: rename it to .${format} and upload it again.`,
    );
  }
  const stored = zip.find(main);
  if (!stored) {
    throw new MalformedDocumentError(
      `${filename} is damaged: its main part ${main} (${MAIN_PART[format]} in a file saved by Office) is missing. Save it again from the Office application and upload it again.`,
    );
  }
  const readPart = async (part: string, visitor: XmlVisitor) => {
    const text = await zip.text(part);
    if (text === undefined) return false;
    await xml.scan(text, zip.find(part) ?? part, visitor);
    return true;
  };
  return { zip, format, main: stored, xml, readPart };
}
