/** People and places of the demo company: non-ASCII on purpose, with ASCII spellings for e-mail addresses. */
import type { Random } from './prng.ts'

/** [display spelling, ASCII spelling for e-mail] */
type Name = readonly [string, string]

const FIRST_NAMES: readonly Name[] = [
  ['Jürgen', 'juergen'],
  ['Anna', 'anna'],
  ['François', 'francois'],
  ['Łukasz', 'lukasz'],
  ['João', 'joao'],
  ['Zoë', 'zoe'],
  ['Björn', 'bjoern'],
  ['María José', 'mariajose'],
  ['Søren', 'soeren'],
  ['Chloé', 'chloe'],
  ['Mehmet', 'mehmet'],
  ['Priya', 'priya'],
  ['Ólafur', 'olafur'],
  ['Tomasz', 'tomasz'],
  ['Émilie', 'emilie'],
  ['Kai', 'kai'],
  ['Jiří', 'jiri'],
  ['Siobhán', 'siobhan'],
]

const LAST_NAMES: readonly Name[] = [
  ['Müller', 'mueller'],
  ['Schäfer', 'schaefer'],
  ['Dupont', 'dupont'],
  ['Kowalczyk', 'kowalczyk'],
  ['da Silva', 'dasilva'],
  ["O'Brien", 'obrien'],
  ['Ångström', 'angstroem'],
  ['Pérez', 'perez'],
  ['Nørgaard', 'noergaard'],
  ['Lefèvre', 'lefevre'],
  ['Yılmaz', 'yilmaz'],
  ['Wiśniewska', 'wisniewska'],
  ['Smith', 'smith'],
  ['Straße', 'strasse'],
  ['Novák', 'novak'],
  ['van der Berg', 'vanderberg'],
]

/** Japanese names are written family name first, so they come as whole names. */
const WHOLE_NAMES: readonly Name[] = [
  ['山田 太郎', 'taro.yamada'],
  ['佐藤 花子', 'hanako.sato'],
  ['鈴木 一郎', 'ichiro.suzuki'],
  ['김 민준', 'minjun.kim'],
]

export interface Person {
  readonly displayName: string
  /** Local part of the e-mail address. */
  readonly mailbox: string
}

export const MAIL_DOMAIN = 'corp.example.com'

export const randomPerson = (random: Random): Person => {
  if (random.chance(0.06)) {
    const [displayName, mailbox] = random.pick(WHOLE_NAMES)
    return { displayName, mailbox }
  }
  const [first, firstAscii] = random.pick(FIRST_NAMES)
  const [last, lastAscii] = random.pick(LAST_NAMES)
  return { displayName: `${first} ${last}`, mailbox: `${firstAscii}.${lastAscii}` }
}

export const DEPARTMENTS = [
  'IT Operations',
  'Finance & Controlling',
  'Sales, EMEA',
  'Sales, APAC',
  'R&D',
  'Human Resources',
  'Legal',
  'Facility Management',
  'Customer Success',
] as const

/** [location as written in the UI, hostname prefix] */
export const LOCATIONS: readonly (readonly [string, string])[] = [
  ['München', 'muc'],
  ['São Paulo', 'sao'],
  ['Kraków', 'krk'],
  ['Zürich', 'zrh'],
  ['東京', 'tyo'],
  ['Berlin', 'ber'],
  ['Malmö', 'mmx'],
  ['Reykjavík', 'rkv'],
  ['New York, NY', 'nyc'],
  ['Montréal', 'yul'],
]
