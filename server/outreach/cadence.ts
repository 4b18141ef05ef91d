/**
 * The default cadence a campaign gets when it first receives prospects: connect on LinkedIn with
 * the note, email the next day, a WhatsApp nudge, and a last email. Steps carry placeholders that
 * each prospect's own message fills, so one cadence serves every prospect; a prospect may still
 * get its own.
 */
import type { CadenceStep } from '../../shared/types.ts';
import { languageOf } from './writer-language.ts';

export type { CadenceStep };

const FOLLOW_UPS = {
  en: {
    whatsapp: 'Hi {{firstName}}, I sent you an email about {{emailSubject}}. Is this a good number to talk?',
    subject: 'Re: {{emailSubject}}',
    last: "Hi {{firstName}}, just bringing this back to the top of your inbox. If it's not a priority now, tell me and I won't insist.",
  },
  pt: {
    whatsapp: 'Olá, {{firstName}}! Te enviei um e-mail sobre {{emailSubject}}. Este é um bom número para conversarmos?',
    subject: 'Re: {{emailSubject}}',
    last: 'Olá, {{firstName}}, retomando o assunto. Se não for prioridade agora, me avise e não insisto.',
  },
  es: {
    whatsapp: 'Hola, {{firstName}}. Le envié un correo sobre {{emailSubject}}. ¿Es un buen número para conversar?',
    subject: 'Re: {{emailSubject}}',
    last: 'Hola, {{firstName}}, retomo este tema. Si ahora no es prioridad, dígamelo y no insisto.',
  },
};

export function defaultCadence(language: string | undefined): CadenceStep[] {
  const w = FOLLOW_UPS[languageOf(language)];
  return [
    { day: 0, channel: 'linkedin', body: '{{connectionNote}}' },
    { day: 1, channel: 'email', subject: '{{emailSubject}}', body: '{{emailBody}}' },
    { day: 4, channel: 'whatsapp', body: w.whatsapp },
    { day: 8, channel: 'email', subject: w.subject, body: w.last },
  ];
}
