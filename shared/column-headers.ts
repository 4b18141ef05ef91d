/**
 * Column headers people give to the same data, in English, Portuguese and Spanish: one list for
 * the server's people import and the add-on's column recognition. Matching ignores case, accents
 * and punctuation ("E-mail", "email", "Correo electrónico").
 */
import { foldText } from './fold-text.ts';

export type HeaderMeaning =
  | 'name'
  | 'firstName'
  | 'lastName'
  | 'title'
  | 'seniority'
  | 'department'
  | 'email'
  | 'emailStatus'
  | 'phone'
  | 'linkedinUrl'
  | 'company'
  | 'domain'
  | 'cnpj'
  | 'industry'
  | 'companySize'
  | 'location'
  | 'companyLocation'
  | 'country'
  | 'revenueRange'
  | 'skills'
  | 'technologies'
  | 'languages';

const HEADERS: Record<HeaderMeaning, string[]> = {
  name: ['name', 'full name', 'fullname', 'contact', 'contact name', 'person', 'nome', 'nome completo', 'contato', 'nombre', 'nombre completo', 'contacto'],
  firstName: ['first name', 'firstname', 'given name', 'primeiro nome', 'nome proprio', 'nombre de pila', 'primer nombre'],
  lastName: ['last name', 'lastname', 'surname', 'family name', 'sobrenome', 'ultimo nome', 'apellido', 'apellidos'],
  title: ['title', 'job title', 'jobtitle', 'position', 'role', 'cargo', 'funcao', 'titulo', 'puesto'],
  seniority: ['seniority', 'seniority level', 'senioridade', 'nivel', 'nivel hierarquico', 'antiguedad'],
  department: ['department', 'function', 'job function', 'departamento', 'area', 'setor do cargo'],
  email: ['email', 'e mail', 'email address', 'work email', 'business email', 'endereco de email', 'correo', 'correo electronico'],
  emailStatus: ['email status', 'status do email', 'status email', 'estado del correo', 'estado email'],
  phone: ['phone', 'phone number', 'telephone', 'mobile', 'mobile phone', 'telefone', 'celular', 'whatsapp', 'telefono', 'movil'],
  linkedinUrl: ['linkedin', 'linkedin url', 'linkedin profile', 'person linkedin url', 'perfil linkedin', 'perfil do linkedin', 'perfil de linkedin'],
  company: ['company', 'company name', 'organization', 'organisation', 'account', 'account name', 'empresa', 'nome da empresa', 'compania', 'organizacion', 'razao social', 'nome fantasia'],
  domain: ['domain', 'company domain', 'website', 'company website', 'site', 'web', 'url', 'dominio', 'sitio web', 'pagina web'],
  cnpj: ['cnpj', 'cnpj da empresa'],
  industry: ['industry', 'sector', 'segment', 'setor', 'segmento', 'industria', 'ramo', 'atividade', 'atividade principal'],
  companySize: ['employees', 'company size', 'headcount', 'number of employees', '# employees', 'funcionarios', 'colaboradores', 'numero de funcionarios', 'tamanho da empresa', 'empleados', 'tamano de la empresa'],
  location: ['location', 'city', 'person location', 'localizacao', 'cidade', 'municipio', 'local', 'ubicacion', 'ciudad', 'localidad'],
  companyLocation: ['company location', 'company city', 'localizacao da empresa', 'cidade da empresa', 'ubicacion de la empresa'],
  country: ['country', 'pais'],
  revenueRange: ['revenue', 'revenue range', 'annual revenue', 'faturamento', 'receita', 'ingresos', 'facturacion'],
  skills: ['skills', 'habilidades', 'competencias'],
  technologies: ['technologies', 'technology', 'tech stack', 'tecnologias'],
  languages: ['languages', 'language', 'idiomas', 'idioma'],
};

const BY_HEADER = new Map<string, HeaderMeaning>();
for (const [meaning, names] of Object.entries(HEADERS) as Array<[HeaderMeaning, string[]]>) {
  for (const name of names) BY_HEADER.set(foldText(name), meaning);
}

/** What a header stands for, if it is one the list knows. */
export const headerMeaning = (header: string): HeaderMeaning | undefined => BY_HEADER.get(foldText(header));
