/** Free-text notes typed by people: commas, quotes, inch marks, line breaks (LF and CRLF) and non-ASCII. */
export const DEVICE_NOTES: readonly string[] = [
  'Replaced battery, keyboard and palm rest',
  'User reports "fan noise" under load',
  'Screen 14" cracked; awaiting spare part',
  'Line 1: reimaged\nLine 2: BitLocker key escrowed',
  'Loaner device, return to IT desk\r\n(ticket #48213)',
  'Ausgegeben an Frau Müller – Übergabeprotokoll liegt vor',
  'Asset tag "A-000417" missing, re-labelled',
  '  two leading spaces and a trailing one ',
  'Decommission planned, Q1/2027',
  '東京オフィス 3F、会議室 B',
  'Comma, "quotes", and\na line break',
  'Docking station: WD19TB; monitor 27", 2x',
]
