/**
 * The seniority a job title implies, in the vocabulary of the large people databases
 * (`SENIORITIES`): "CEO", "Diretor-Presidente" and "Chief Revenue Officer" are `c_suite`,
 * "Sócio-Administrador" is `owner`, "Fundadora" is `founder`. Titles are folded (accents and
 * punctuation gone) before matching; the first pattern that matches wins, so the more senior
 * reading of a compound title ("Diretor-Presidente", "Founder & CEO") comes first.
 */
import { foldText } from '../../shared/fold-text.ts';
import type { SENIORITIES } from '../../shared/schemas/search.ts';

type Seniority = (typeof SENIORITIES)[number];

const BY_TITLE: Array<[RegExp, Seniority]> = [
  [/\b(co ?)?(founder|fundador|fundadora|cofundador|cofundadora|fundador(a)? e)\b/, 'founder'],
  [/\b(owner|dono|dona|proprietario|proprietaria|titular|socio administrador|socia administradora|socio gerente|socia gerente|empresario|empresaria)\b/, 'owner'],
  [
    /\b(ceo|cto|cfo|coo|cmo|cio|cro|cpo|cso|cdo|chro|chief [a-z ]*officer|diretor presidente|diretora presidente|presidente|president|director general|directora general|diretor geral|diretora geral)\b/,
    'c_suite',
  ],
  [/\b(partner|socio|socia)\b/, 'partner'],
  [/\b(vp|svp|evp|vice president|vice presidente|vicepresidente)\b/, 'vp'],
  [/\b(head|chefe)\b/, 'head'],
  [/\b(director|directora|diretor|diretora)\b/, 'director'],
  [/\b(manager|gerente|coordenador|coordenadora|coordinator|coordinador|coordinadora|supervisor|supervisora)\b/, 'manager'],
  [/\b(senior|sr|especialista|specialist|lead|principal)\b/, 'senior'],
  [/\b(intern|estagiario|estagiaria|trainee|becario|becaria|pasante)\b/, 'intern'],
  [/\b(junior|jr|assistente|assistant|analista|analyst|asistente)\b/, 'entry'],
];

export function seniorityOfTitle(title: string | null): Seniority | null {
  if (!title) return null;
  const folded = foldText(title);
  return BY_TITLE.find(([pattern]) => pattern.test(folded))?.[1] ?? null;
}
