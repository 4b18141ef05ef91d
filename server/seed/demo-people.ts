/**
 * The demo people set: synthetic people at fictional companies, the same on every machine, so a
 * newcomer can try every people-search filter and hydrate at once. Stored without a workspace
 * (every workspace of a demo store can search it) as the `demo` source; real stores have none.
 */
import { personDocument, type People, type PersonRecord } from '../people/people.ts';

export const DEMO_PEOPLE = 360;

const FIRST = ['Ana', 'Bruno', 'Carla', 'Diego', 'Elisa', 'Felipe', 'Gabriela', 'Henrique', 'Isabela', 'João', 'Larissa', 'Marcos', 'Natália', 'Otávio', 'Paula', 'Rafael', 'Sofia', 'Thiago', 'Valéria', 'William', 'Camila', 'Lucas', 'Mariana', 'Pedro'];
const LAST = ['Silva', 'Souza', 'Oliveira', 'Santos', 'Pereira', 'Costa', 'Rodrigues', 'Almeida', 'Nascimento', 'Lima', 'Araújo', 'Fernandes', 'Carvalho', 'Gomes', 'Martins', 'Rocha', 'Ribeiro', 'Barbosa'];

interface DemoCompany {
  name: string;
  domain: string;
  industry: string;
  size: number;
  city: string;
  revenue: string;
  technologies: string[];
}

const COMPANIES: DemoCompany[] = [
  { name: 'Nuvem Azul Software', domain: 'nuvemazul.example', industry: 'Computer Software', size: 180, city: 'São Paulo, SP', revenue: '$10M-$50M', technologies: ['AWS', 'React', 'HubSpot'] },
  { name: 'Padaria Pão Quente', domain: 'paoquente.example', industry: 'Food & Beverages', size: 35, city: 'Curitiba, PR', revenue: '$1M-$10M', technologies: ['WhatsApp Business', 'Shopify'] },
  { name: 'Clínica Sorriso Vivo', domain: 'sorrisovivo.example', industry: 'Health, Wellness & Fitness', size: 60, city: 'Belo Horizonte, MG', revenue: '$1M-$10M', technologies: ['Google Workspace', 'RD Station'] },
  { name: 'Logística Rota Certa', domain: 'rotacerta.example', industry: 'Logistics & Supply Chain', size: 850, city: 'Campinas, SP', revenue: '$50M-$100M', technologies: ['SAP', 'Salesforce'] },
  { name: 'Agro Verde Cooperativa', domain: 'agroverde.example', industry: 'Farming', size: 2300, city: 'Londrina, PR', revenue: '$100M-$500M', technologies: ['SAP', 'Microsoft Dynamics'] },
  { name: 'Banco Horizonte Digital', domain: 'horizontedigital.example', industry: 'Financial Services', size: 4200, city: 'São Paulo, SP', revenue: '$500M-$1B', technologies: ['AWS', 'Kubernetes', 'Salesforce'] },
  { name: 'EducaMais Escolas', domain: 'educamais.example', industry: 'Education Management', size: 420, city: 'Recife, PE', revenue: '$10M-$50M', technologies: ['Google Workspace', 'Moodle'] },
  { name: 'Construtora Alicerce', domain: 'alicerce.example', industry: 'Construction', size: 1200, city: 'Rio de Janeiro, RJ', revenue: '$100M-$500M', technologies: ['Autodesk', 'SAP'] },
  { name: 'Moda Brisa Confecções', domain: 'modabrisa.example', industry: 'Apparel & Fashion', size: 95, city: 'Blumenau, SC', revenue: '$1M-$10M', technologies: ['Shopify', 'Meta Ads'] },
  { name: 'Energia Sol Nascente', domain: 'solnascente.example', industry: 'Renewables & Environment', size: 300, city: 'Fortaleza, CE', revenue: '$10M-$50M', technologies: ['Salesforce', 'Power BI'] },
  { name: 'Tech Pampa Sistemas', domain: 'techpampa.example', industry: 'Information Technology and Services', size: 48, city: 'Porto Alegre, RS', revenue: '$1M-$10M', technologies: ['Azure', 'React', 'Pipedrive'] },
  { name: 'Hospital Santa Clara', domain: 'santaclara.example', industry: 'Hospital & Health Care', size: 3100, city: 'Salvador, BA', revenue: '$100M-$500M', technologies: ['Oracle', 'Microsoft 365'] },
];

/** Title, seniority and department of each role a demo company has. */
const ROLES: Array<[string, string, string]> = [
  ['CEO', 'c_suite', 'executive'],
  ['Founder', 'founder', 'executive'],
  ['CTO', 'c_suite', 'engineering'],
  ['VP of Sales', 'vp', 'sales'],
  ['Head of Marketing', 'head', 'marketing'],
  ['Director of Operations', 'director', 'operations'],
  ['Finance Manager', 'manager', 'finance'],
  ['HR Manager', 'manager', 'human_resources'],
  ['Senior Software Engineer', 'senior', 'engineering'],
  ['Account Executive', 'senior', 'sales'],
  ['Customer Success Manager', 'manager', 'customer_success'],
  ['Product Manager', 'manager', 'product'],
  ['Marketing Analyst', 'entry', 'marketing'],
  ['Legal Counsel', 'senior', 'legal'],
  ['Sales Intern', 'intern', 'sales'],
];

const SKILLS: Record<string, string[]> = {
  executive: ['Leadership', 'Strategy'],
  engineering: ['TypeScript', 'Cloud Architecture'],
  sales: ['Negotiation', 'B2B Sales'],
  marketing: ['SEO', 'Content Marketing'],
  operations: ['Lean', 'Supply Chain'],
  finance: ['Budgeting', 'Excel'],
  human_resources: ['Recruiting', 'People Management'],
  customer_success: ['Onboarding', 'Customer Retention'],
  product: ['Roadmapping', 'User Research'],
  legal: ['Contracts', 'LGPD'],
};

const STATUSES = ['verified', 'verified', 'likely to engage', 'unverified', 'unavailable'];

const fold = (text: string) => text.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();

export function demoPerson(i: number): PersonRecord {
  const company = COMPANIES[i % COMPANIES.length]!;
  const [title, seniority, department] = ROLES[Math.floor(i / COMPANIES.length) % ROLES.length]!;
  const firstName = FIRST[(i * 7) % FIRST.length]!;
  const lastName = LAST[(i * 11 + Math.floor(i / FIRST.length)) % LAST.length]!;
  const status = STATUSES[(i * 3) % STATUSES.length]!;
  const handle = `${fold(firstName)}.${fold(lastName)}`;
  return {
    name: `${firstName} ${lastName}`,
    firstName,
    lastName,
    title,
    seniority,
    department,
    email: status === 'unavailable' ? null : `${handle}${i}@${company.domain}`,
    emailStatus: status,
    phone: i % 4 === 0 ? `+55 11 9${String(10_000_000 + i * 7919).slice(0, 8)}` : null,
    linkedinUrl: `https://www.linkedin.com/in/${handle.replace('.', '-')}-${i}`,
    company: company.name,
    domain: company.domain,
    industry: company.industry,
    companySize: company.size,
    companyLocation: `${company.city}, Brazil`,
    location: i % 5 === 0 ? 'Remote, Brazil' : `${company.city}, Brazil`,
    country: 'Brazil',
    revenueRange: company.revenue,
    skills: SKILLS[department] ?? [],
    technologies: company.technologies,
    languages: i % 3 === 0 ? ['Portuguese', 'English', 'Spanish'] : ['Portuguese', 'English'],
  };
}

/** Writes the demo set when it is missing; returns how many people were added. */
export async function seedDemoPeople(people: People): Promise<number> {
  if ((await people.count({ workspaceId: null })) > 0) return 0;
  const docs = Array.from({ length: DEMO_PEOPLE }, (_, i) => personDocument(null, 'demo', demoPerson(i)));
  return (await people.upsert(docs)).inserted;
}
