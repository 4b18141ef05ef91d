/**
 * A synthetic Receita Federal CNPJ open-data release in the published layout: 37 zips (or the
 * CSVs inside them) of headerless, fully quoted, `;`-separated latin1 rows, for tests, the
 * import benchmark and the demo data.
 *
 * Every record is a pure function of the seed and its company's index, so each file is written
 * on its own by walking the indices and rebuilding what it needs: memory stays at a byte per
 * company whatever the size, the files stream, and the same seed gives the same bytes.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { cnpjCheckDigits } from '../../shared/cnpj.ts';
import {
  ABROAD_MUNICIPALITY_CODE,
  CNAE_SUBCLASSES,
  COUNTRIES,
  LEGAL_NATURES,
  MUNICIPALITIES,
  PARTNER_QUALIFICATIONS,
  REGISTRATION_REASONS,
  type CodeTableEntry,
  type Municipality,
} from './code-tables.ts';

export interface GenerateOptions {
  /** Created if missing; the files are written inside. */
  dir: string;
  /** Total Estabelecimentos rows. */
  establishments: number;
  /** Default 1; the same seed and options give byte-identical files. */
  seed?: number;
  /** `YYYY-MM`, default `2026-10`; its extraction date names the inner files (`D61011`). */
  release?: string;
  /** Default `zip`: the 37 published zips; `csv`: the files inside them, under their inner names. */
  format?: 'zip' | 'csv';
  /**
   * The release after another one of the same seed and size (`from`, an earlier month): its
   * establishments as they were then, about `rate` of them changed this month (closed or
   * suspended, moved, new phone or email, new main activity), and for a quarter as many
   * companies a new partner and a branch opened this month; a twentieth as many establishments
   * are no longer in the files. For the change feed's tests and benchmark.
   */
  after?: { from: string; rate: number };
}

export interface GeneratedRelease {
  /** Paths of the written files (in `dir`), in the published order. */
  files: string[];
  /** Estabelecimentos rows (with `after`: those opened this month in, those gone out). */
  establishments: number;
  /** Distinct roots: the Empresas rows. */
  companies: number;
  /** Socios rows. */
  partners: number;
  /** Simples rows. */
  simples: number;
  /** Rows of the tax-regime files (Lucro Real, Presumido, Arbitrado, Imunes e Isentas). */
  taxRegimes: number;
}

export async function generateRelease(options: GenerateOptions): Promise<GeneratedRelease> {
  const release = new SyntheticRelease(options.establishments, options.seed ?? 1, options.release ?? '2026-10', options.after);
  const zipped = (options.format ?? 'zip') === 'zip';
  await mkdir(options.dir, { recursive: true });
  const queue = release.files();
  const files = queue.map((file) => path.join(options.dir, zipped ? file.zip : file.inner));
  let next = 0;
  // Deflate runs on libuv's threads: writing two files at a time keeps both cores busy.
  const writer = async () => {
    for (let i = next++; i < queue.length; i = next++) {
      const data = Readable.from(latin1Chunks(queue[i]!.lines()), { objectMode: false });
      await (zipped
        ? writeZip(files[i]!, queue[i]!.inner, data, release.mtime)
        : pipeline(data, createWriteStream(files[i]!)));
    }
  };
  await Promise.all([writer(), writer()]);
  return {
    files,
    establishments: release.establishments,
    companies: release.companies,
    partners: release.partnerRows,
    simples: release.simplesRows,
    taxRegimes: release.taxRegimeRows,
  };
}

async function writeZip(target: string, inner: string, data: Readable, mtime: Date): Promise<void> {
  const zip = new yazl.ZipFile();
  // Without the UTC extra field only the DOS date is written, and it comes from local time fields
  // that `mtime` fixes, so the bytes do not depend on the machine's time zone. Level 3 packs about
  // as tightly as the published zips (3.5x against their 3.7x) for two thirds of level 6's CPU.
  zip.addReadStream(data, inner, { mtime, forceDosTimestamp: true, compressionLevel: 3 });
  zip.end();
  const output = zip.outputStream as Readable;
  data.once('error', (error) => output.destroy(error));
  await pipeline(output, createWriteStream(target));
}

const CHUNK_CHARS = 256 * 1024;

function* latin1Chunks(lines: Iterable<string>): Generator<Buffer> {
  let chunk = '';
  for (const line of lines) {
    chunk += line;
    if (chunk.length >= CHUNK_CHARS) {
      yield Buffer.from(chunk, 'latin1');
      chunk = '';
    }
  }
  if (chunk) yield Buffer.from(chunk, 'latin1');
}

/** Every field quoted, empty ones too, as the Receita writes them; no field holds a quote. */
function csvLine(fields: readonly string[]): string {
  return `"${fields.join('";"')}"\n`;
}

// ---------------------------------------------------------------------------------------------
// Randomness: a fresh sequence per record, keyed by (seed, stream, index).

function mix(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

const enum Stream {
  Company = 1,
  Establishment,
  Partners,
  Simples,
  Branches,
  Alphanumeric,
  CompanyPart,
  EstablishmentPart,
  RootLetters,
  TaxRegime,
  Drift,
}

function recordKey(seed: number, stream: Stream, index: number): number {
  return mix(mix(mix(seed) + Math.imul(stream, 0x9e3779b9)) + index);
}

/** mulberry32: a few lines, fast, and plenty for synthetic data. */
class Random {
  private state = 0;

  reset(seed: number): this {
    this.state = seed | 0;
    return this;
  }

  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  digits(n: number): string {
    let out = '';
    for (let i = 0; i < n; i++) out += this.int(10);
    return out;
  }
}

class Weighted<T> {
  private readonly items: T[];
  private readonly bounds: number[];

  constructor(entries: ReadonlyArray<readonly [T, number]>) {
    let total = 0;
    this.items = entries.map(([item]) => item);
    this.bounds = entries.map(([, weight]) => (total += weight));
  }

  pick(random: Random): T {
    const target = random.next() * this.bounds[this.bounds.length - 1]!;
    let lo = 0;
    let hi = this.bounds.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.bounds[mid]! > target) hi = mid;
      else lo = mid + 1;
    }
    return this.items[lo]!;
  }
}

// ---------------------------------------------------------------------------------------------
// Vocabulary. Names are upper case without accents, as most registry names are.

const MALE_NAMES = [
  'JOAO', 'JOSE', 'ANTONIO', 'FRANCISCO', 'CARLOS', 'PAULO', 'PEDRO', 'LUCAS', 'LUIZ', 'MARCOS', 'GABRIEL', 'RAFAEL',
  'DANIEL', 'MARCELO', 'BRUNO', 'EDUARDO', 'FELIPE', 'RAIMUNDO', 'RODRIGO', 'MANOEL', 'MATEUS', 'ANDRE', 'FERNANDO',
  'FABIO', 'LEONARDO', 'GUSTAVO', 'GUILHERME', 'SEBASTIAO', 'ALEXANDRE', 'RICARDO', 'DIEGO', 'THIAGO', 'SERGIO',
  'ROBERTO', 'JORGE', 'EDSON', 'VINICIUS', 'HENRIQUE', 'MARIO', 'CLAUDIO',
];
const FEMALE_NAMES = [
  'MARIA', 'ANA', 'FRANCISCA', 'ANTONIA', 'ADRIANA', 'JULIANA', 'MARCIA', 'FERNANDA', 'PATRICIA', 'ALINE', 'SANDRA',
  'CAMILA', 'AMANDA', 'BRUNA', 'JESSICA', 'LETICIA', 'JULIA', 'LUCIANA', 'VANESSA', 'MARIANA', 'GABRIELA', 'VERA',
  'VITORIA', 'LARISSA', 'CLAUDIA', 'BEATRIZ', 'LUANA', 'RITA', 'SONIA', 'RENATA', 'ELIANE', 'JOSEFA', 'SIMONE',
  'CRISTINA', 'TEREZINHA', 'APARECIDA', 'ROSANGELA', 'DANIELA', 'CARLA', 'PRISCILA',
];
const SURNAMES = [
  'SILVA', 'SANTOS', 'OLIVEIRA', 'SOUZA', 'RODRIGUES', 'FERREIRA', 'ALVES', 'PEREIRA', 'LIMA', 'GOMES', 'COSTA',
  'RIBEIRO', 'MARTINS', 'CARVALHO', 'ALMEIDA', 'LOPES', 'SOARES', 'FERNANDES', 'VIEIRA', 'BARBOSA', 'ROCHA', 'DIAS',
  'NASCIMENTO', 'ANDRADE', 'MOREIRA', 'NUNES', 'MARQUES', 'MACHADO', 'MENDES', 'FREITAS', 'CARDOSO', 'RAMOS',
  'GONCALVES', 'SANTANA', 'TEIXEIRA', 'ARAUJO', 'PINTO', 'CAVALCANTI', 'MONTEIRO', 'MOURA', 'CORREIA', 'CAMPOS',
  'BATISTA', 'MELO', 'PIRES', 'REIS', 'BORGES', 'AZEVEDO', 'CASTRO', 'MIRANDA',
];
const JOINED_SURNAMES = [
  'DA SILVA', 'DOS SANTOS', 'DE OLIVEIRA', 'DE SOUZA', 'DA COSTA', 'DE ALMEIDA', 'DE JESUS', 'DA CONCEICAO', 'DOS REIS',
  'DE LIMA', 'DA ROCHA', 'DE ASSIS', 'DE MELO', 'DO NASCIMENTO', 'DE ARAUJO',
];
// A few accented spellings: some registry names keep their accents.
const DISTINCTIVES = [
  'SAO JOAO', 'SANTA RITA', 'SAO JORGE', 'NOSSA SENHORA APARECIDA', 'SANTO ANTONIO', 'SAO FRANCISCO', 'SAO JOSE',
  'BOM JESUS', 'SANTA LUZIA', 'SAO PEDRO', 'SÃO JOÃO', 'CONCEIÇÃO', 'CENTRAL', 'PAULISTA', 'MINEIRA', 'CARIOCA',
  'DO VALE', 'BOA VISTA', 'PRIMAVERA', 'ESTRELA', 'NOVA ERA', 'REAL', 'IMPERIAL', 'BRASIL', 'ALIANCA', 'HORIZONTE',
  'DOURADA', 'BELA VISTA', 'DO POVO', 'DA FAMILIA', 'FENIX', 'ATLANTICO', 'PANTANAL', 'AMAZONIA', 'DO SOL', 'VITORIA',
  'ESPERANCA', 'UNIAO', 'PROGRESSO', 'MODELO', 'PREMIUM', 'EXPRESS', 'GLOBAL', 'MASTER', 'PRIME', 'ELITE', 'NOBRE',
  'ALPHA', 'ORIGINAL', 'DO BAIRRO', 'DA PRACA', 'DO CENTRO', 'ARCO IRIS', 'TRIUNFO', 'SOL NASCENTE', 'BOM GOSTO',
];

interface Profile {
  /** Main activities, the first the most typical; secondary ones come from the same list. */
  readonly cnaes: readonly string[];
  /** Words a company name starts with, matching the activity ("PADARIA" for a bakery). */
  readonly words: readonly string[];
}

// Everyday businesses as [weight, activities, name words], roughly as frequent as in the
// registry; the remaining weight takes any CNAE and a word for its sector.
const PROFILE_ROWS: Array<[number, string[], string[]]> = [
  [3, ['4721102', '1091102', '1091101', '4721104'],
    ['PADARIA', 'PANIFICADORA', 'PADARIA E CONFEITARIA', 'CONFEITARIA']],
  [4, ['5611201', '5611203', '5620104'],
    ['RESTAURANTE', 'CHURRASCARIA', 'PIZZARIA', 'CANTINA']],
  [4, ['5611203', '5611201', '4729699'],
    ['LANCHONETE', 'LANCHES', 'HAMBURGUERIA', 'PASTELARIA']],
  [2, ['5611204', '5611205', '4723700'],
    ['BAR', 'BAR E PETISCARIA', 'CHOPERIA']],
  [2, ['5620104', '5620102', '5620101'],
    ['MARMITARIA', 'COZINHA', 'REFEICOES']],
  [3, ['4712100', '4711302', '4721103', '4724500'],
    ['MERCADO', 'SUPERMERCADO', 'MERCEARIA', 'MINIMERCADO']],
  [1, ['4722901', '4634601'],
    ['ACOUGUE', 'CASA DE CARNES', 'CASA DE CARNES E FRIOS']],
  [1, ['4724500', '4633801'],
    ['HORTIFRUTI', 'SACOLAO', 'QUITANDA']],
  [1.5, ['4723700', '4635402', '4635499'],
    ['DISTRIBUIDORA DE BEBIDAS', 'ADEGA', 'DEPOSITO DE BEBIDAS']],
  [6, ['4781400', '1412601', '4782201', '4789001'],
    ['MODAS', 'BOUTIQUE', 'CONFECCOES', 'MODA FEMININA']],
  [1, ['4782201', '4781400', '4782202'],
    ['CALCADOS', 'SAPATARIA']],
  [5, ['9602501', '9602502', '4772500'],
    ['SALAO DE BELEZA', 'STUDIO DE BELEZA', 'CABELEIREIROS', 'ESTETICA', 'ESPACO DA BELEZA']],
  [2, ['4771701', '4772500', '4773300'],
    ['FARMACIA', 'DROGARIA']],
  [1.5, ['8630504', '3250706', '8630503'],
    ['ODONTOLOGIA', 'CLINICA ODONTOLOGICA', 'CONSULTORIO ODONTOLOGICO', 'ODONTO']],
  [1.5, ['8630503', '8630502', '8630501', '8640202'],
    ['CLINICA MEDICA', 'CENTRO MEDICO', 'CONSULTORIO MEDICO']],
  [1, ['8650004', '8650003', '8650002', '8650006'],
    ['FISIOTERAPIA', 'PSICOLOGIA', 'NUTRICAO', 'CLINICA DE FISIOTERAPIA']],
  [1, ['9313100', '8591100'],
    ['ACADEMIA', 'FITNESS', 'CENTRO DE TREINAMENTO']],
  [2, ['6201501', '6202300', '6203100', '6204000', '6209100', '6311900', '6201502'],
    ['SOFTHOUSE TECNOLOGIA', 'SISTEMAS', 'TECNOLOGIA', 'SOFTWARE', 'SOLUCOES DIGITAIS', 'TECH']],
  [1.5, ['4751201', '9511800', '4751202'],
    ['INFORMATICA', 'COMPUTADORES', 'ASSISTENCIA TECNICA']],
  [1, ['4752100', '9512600'],
    ['CELULARES', 'TELECOM', 'CELL']],
  [1.5, ['6920601', '6920602', '8219999'],
    ['CONTABILIDADE', 'ESCRITORIO CONTABIL', 'ASSESSORIA CONTABIL']],
  [1, ['6911701', '6911702'],
    ['ADVOCACIA', 'ADVOGADOS ASSOCIADOS', 'SOCIEDADE DE ADVOGADOS']],
  [3, ['7020400', '7490104', '8211300'],
    ['CONSULTORIA', 'ASSESSORIA', 'GESTAO EMPRESARIAL', 'NEGOCIOS']],
  [3, ['7319002', '7311400', '7319004', '7319003', '7420001'],
    ['PUBLICIDADE', 'MARKETING', 'PROPAGANDA', 'COMUNICACAO']],
  [5, ['4120400', '4399103', '4330404', '4321500', '4322301', '4399199', '4330499'],
    ['CONSTRUTORA', 'CONSTRUCOES', 'ENGENHARIA', 'REFORMAS', 'OBRAS', 'INSTALACOES']],
  [2, ['4744099', '4744005', '4744001', '4744004'],
    ['MATERIAIS DE CONSTRUCAO', 'DEPOSITO', 'MADEIREIRA', 'FERRAGENS']],
  [3, ['4520001', '4520002', '4520005', '4520006', '4520004'],
    ['AUTO MECANICA', 'OFICINA MECANICA', 'CENTRO AUTOMOTIVO', 'LAVA JATO', 'FUNILARIA', 'BORRACHARIA']],
  [1, ['4530703', '4530705', '4541206'],
    ['AUTO PECAS', 'AUTOPECAS', 'PECAS E ACESSORIOS']],
  [3, ['4930201', '4930202', '5320202', '4929901', '5250804'],
    ['TRANSPORTES', 'TRANSPORTADORA', 'LOGISTICA', 'ENTREGAS RAPIDAS']],
  [2, ['8513900', '8511200', '8593700', '8599699', '8599604', '8520100'],
    ['ESCOLA', 'COLEGIO', 'CENTRO EDUCACIONAL', 'ESCOLA DE IDIOMAS', 'CURSOS']],
  [1.5, ['7500100', '4789004', '9609208'],
    ['CLINICA VETERINARIA', 'PET SHOP', 'VETERINARIA', 'AGROPET']],
  [0.8, ['5510801', '5590699', '5510802'],
    ['HOTEL', 'POUSADA', 'HOSTEL']],
  [1.5, ['6821801', '6810202', '6822600', '4110700'],
    ['IMOVEIS', 'IMOBILIARIA', 'EMPREENDIMENTOS IMOBILIARIOS', 'ADMINISTRADORA DE BENS']],
  [3, ['8121400', '8111700', '8011101', '8219999', '8211300'],
    ['LIMPEZA', 'SERVICOS', 'FACILITIES', 'SEGURANCA', 'TERCEIRIZACAO']],
  [2, ['8230001', '7420004', '9001906', '5620102', '8230002'],
    ['EVENTOS', 'BUFFET', 'FOTOGRAFIA', 'PRODUCOES', 'FESTAS']],
  [1.5, ['0151201', '0115600', '0134200', '4623199', '0161003'],
    ['AGROPECUARIA', 'FAZENDA', 'AGRICOLA', 'AGRONEGOCIO']],
  [0.5, ['4731800', '4732600', '4729602'],
    ['AUTO POSTO', 'POSTO', 'COMERCIO DE COMBUSTIVEIS']],
  [2, ['2599399', '3101200', '2222600', '1813099', '2330399', '2539001'],
    ['INDUSTRIA', 'METALURGICA', 'MOVEIS', 'PLASTICOS', 'GRAFICA', 'PRE-MOLDADOS']],
  [3, ['4639701', '4649499', '4619200', '4789099', '4757100', '4618499'],
    ['DISTRIBUIDORA', 'COMERCIAL', 'REPRESENTACOES', 'ATACADO', 'IMPORTADORA']],
  [1.5, ['1412602', '9529101', '4789001', '1359600'],
    ['ATELIE', 'COSTURA', 'ARTESANATO', 'BORDADOS']],
  [0.8, ['4761003', '8219901', '1813001'],
    ['PAPELARIA', 'COPIADORA', 'GRAFICA RAPIDA']],
  [0.6, ['4774100', '4783101', '4783102'],
    ['OTICA', 'JOALHERIA', 'RELOJOARIA']],
];
const PROFILES = new Weighted<Profile | null>([
  ...PROFILE_ROWS.map(([weight, cnaes, words]) => [{ cnaes, words }, weight] as const),
  [null, 14],
]);

const SECTOR_WORDS: ReadonlyArray<readonly [lastDivision: number, words: readonly string[]]> = [
  [3, ['AGROPECUARIA', 'AGRICOLA', 'AGRONEGOCIOS']],
  [9, ['MINERACAO', 'EXTRACAO MINERAL']],
  [33, ['INDUSTRIA E COMERCIO', 'INDUSTRIAL', 'FABRICACAO']],
  [39, ['AMBIENTAL', 'SANEAMENTO', 'ENERGIA']],
  [43, ['CONSTRUCOES', 'ENGENHARIA', 'CONSTRUTORA']],
  [45, ['VEICULOS', 'AUTOMOTIVA']],
  [46, ['DISTRIBUIDORA', 'COMERCIAL', 'ATACADISTA']],
  [47, ['COMERCIO', 'COMERCIAL', 'LOJA']],
  [53, ['TRANSPORTES', 'LOGISTICA']],
  [56, ['ALIMENTACAO', 'HOTELARIA']],
  [63, ['TECNOLOGIA', 'COMUNICACAO', 'MIDIA']],
  [66, ['PARTICIPACOES', 'INVESTIMENTOS', 'SERVICOS FINANCEIROS']],
  [68, ['EMPREENDIMENTOS IMOBILIARIOS', 'IMOVEIS']],
  [75, ['CONSULTORIA', 'ASSESSORIA', 'SERVICOS TECNICOS']],
  [82, ['SERVICOS', 'LOCACAO', 'TERCEIRIZACAO']],
  [85, ['EDUCACAO', 'ENSINO', 'CURSOS']],
  [88, ['SAUDE', 'CLINICA', 'SERVICOS MEDICOS']],
  [93, ['EVENTOS', 'PRODUCOES', 'ENTRETENIMENTO']],
  [99, ['SERVICOS']],
];

// Public administration, associations, domestic work, foreign bodies, the central bank and
// condominiums are not what businesses do.
const BUSINESS_CNAES = CNAE_SUBCLASSES.map((entry) => entry.code).filter(
  (code) => !/^(84|94|97|99)/.test(code) && code !== '6410700' && code !== '8112500',
);
const CNAES_BY_DIVISION = new Map<string, string[]>();
for (const code of BUSINESS_CNAES) {
  const division = code.slice(0, 2);
  if (!CNAES_BY_DIVISION.has(division)) CNAES_BY_DIVISION.set(division, []);
  CNAES_BY_DIVISION.get(division)!.push(code);
}

const LTDA_SUFFIXES = new Weighted([
  [' LTDA', 85],
  [' LTDA - ME', 8],
  [' LTDA ME', 3],
  [' LTDA - EPP', 4],
]);

const STREETS = [
  'SETE DE SETEMBRO', 'QUINZE DE NOVEMBRO', 'DOM PEDRO II', 'GETULIO VARGAS', 'JOSE BONIFACIO', 'BARAO DO RIO BRANCO',
  'TIRADENTES', 'SANTOS DUMONT', 'DAS FLORES', 'DOS ANDRADAS', 'MARECHAL DEODORO', 'PRESIDENTE VARGAS', 'RUI BARBOSA',
  'JUSCELINO KUBITSCHEK', 'BRASIL', 'SAO JOAO', 'DAS PALMEIRAS', 'DOS IPES', 'DAS ACACIAS', 'INDEPENDENCIA',
  'CASTRO ALVES', 'MONTEIRO LOBATO', 'CARLOS GOMES', 'PEDRO ALVARES CABRAL', 'DUQUE DE CAXIAS', 'FLORIANO PEIXOTO',
  'BENJAMIN CONSTANT', 'OSWALDO CRUZ', 'TREZE DE MAIO', 'SAO PAULO', 'RIO DE JANEIRO', 'AMAZONAS', 'PARANA',
  'BAHIA', 'MINAS GERAIS', 'GOIAS', 'DAS AMERICAS', 'DO COMERCIO', 'DA REPUBLICA', 'PRINCESA ISABEL',
  'VISCONDE DE MAUA', 'JOAQUIM NABUCO', 'SANTA CATARINA', 'DAS NACOES', 'DOS BANDEIRANTES', 'DO CONTORNO',
];
const STREET_TYPES = new Weighted([
  ['RUA', 62],
  ['AVENIDA', 20],
  ['TRAVESSA', 4],
  ['ALAMEDA', 3],
  ['ESTRADA', 3],
  ['RODOVIA', 3],
  ['PRACA', 2],
  ['QUADRA', 1],
  ['LARGO', 1],
  ['VIA', 1],
]);
const DISTRICTS = [
  'JARDIM AMERICA', 'VILA NOVA', 'SAO JOSE', 'SANTA CRUZ', 'BELA VISTA', 'BOA VISTA', 'PLANALTO', 'INDUSTRIAL',
  'DISTRITO INDUSTRIAL', 'JARDIM EUROPA', 'VILA MARIANA', 'SANTA MONICA', 'NOVA ESPERANCA', 'JARDIM PAULISTA',
  'PARQUE INDUSTRIAL', 'LIBERDADE', 'SAO FRANCISCO', 'CIDADE NOVA', 'ZONA RURAL', 'ALTO DA BOA VISTA', 'JARDIM IPE',
  'SANTO ANTONIO', 'VILA OPERARIA', 'PARQUE DAS NACOES', 'JARDIM DAS FLORES', 'RESIDENCIAL PRIMAVERA', 'BOM RETIRO',
  'CAMPO GRANDE', 'FATIMA', 'ALDEOTA', 'BOA VIAGEM', 'SAVASSI', 'COPACABANA', 'BATEL', 'MOINHOS DE VENTO',
];
const COMPLEMENTS = ['SALA', 'LOJA', 'APTO', 'ANDAR', 'GALPAO', 'CASA', 'BOX', 'BLOCO'];
const EMAIL_DOMAINS = [
  'gmail.com', 'hotmail.com', 'yahoo.com.br', 'outlook.com', 'uol.com.br', 'bol.com.br', 'terra.com.br',
];
const EMAIL_PREFIXES = ['contato', 'financeiro', 'comercial', 'adm', 'atendimento', 'vendas', 'fiscal'];
const SPECIAL_SITUATIONS = [
  'RECUPERACAO JUDICIAL', 'FALIDO', 'EM LIQUIDACAO', 'LIQUIDACAO JUDICIAL', 'LIQUIDACAO EXTRA-JUDICIAL', 'INTERVENCAO',
];
const ABROAD_PLACES: ReadonlyArray<readonly [city: string, country: string]> = [
  ['MIAMI', '249'], ['NEW YORK', '249'], ['ORLANDO', '249'], ['LISBOA', '607'], ['PORTO', '607'],
  ['BUENOS AIRES', '063'], ['MONTEVIDEO', '845'], ['ASSUNCAO', '586'], ['MADRID', '245'], ['LONDRES', '628'],
  ['PARIS', '275'], ['MILAO', '386'], ['TOQUIO', '399'], ['XANGAI', '160'], ['SANTIAGO', '158'], ['LUANDA', '040'],
  ['ZURIQUE', '767'], ['AMSTERDA', '573'],
];
const FOREIGN_PEOPLE = [
  'JOHN SMITH', 'MICHAEL JOHNSON', 'CARLOS GARCIA', 'LUIS FERNANDEZ', 'PIERRE DUBOIS', 'MARCO ROSSI', 'HANS MULLER',
];
const FOREIGN_COMPANIES = [
  'GLOBAL HOLDINGS LLC', 'ATLANTIC INVESTMENTS INC', 'IBERIA PARTICIPACIONES SL', 'EUROTRADE GMBH', 'ANDES CAPITAL SA',
];

// The first five digits of the CEPs of each UF.
const CEP_RANGES: Record<string, readonly [number, number]> = {
  SP: [1000, 19999], RJ: [20000, 28999], ES: [29000, 29999], MG: [30000, 39999], BA: [40000, 48999],
  SE: [49000, 49999], PE: [50000, 56999], AL: [57000, 57999], PB: [58000, 58999], RN: [59000, 59999],
  CE: [60000, 63999], PI: [64000, 64999], MA: [65000, 65999], PA: [66000, 68899], AP: [68900, 68999],
  AM: [69000, 69299], RR: [69300, 69399], AC: [69900, 69999], DF: [70000, 72799], GO: [72800, 76799],
  RO: [76800, 76999], TO: [77000, 77999], MT: [78000, 78899], MS: [79000, 79999], PR: [80000, 87999],
  SC: [88000, 89999], RS: [90000, 99999],
};

const CITIES = MUNICIPALITIES.filter((city) => city.code !== ABROAD_MUNICIPALITY_CODE);
const CITY_PICK = new Weighted(CITIES.map((city) => [city, city.population] as const));
const CITY_PICK_BY_UF = new Map(
  [...new Set(CITIES.map((city) => city.uf))].map((uf) => [
    uf,
    new Weighted(CITIES.filter((city) => city.uf === uf).map((city) => [city, city.population] as const)),
  ]),
);

// Registration statuses (situação cadastral) and the reasons each carries.
const STATUSES = new Weighted([
  ['02', 600],
  ['08', 300],
  ['04', 85],
  ['03', 8],
  ['01', 7],
]);
const REASONS: Record<string, Weighted<string>> = {
  '01': new Weighted([['11', 3], ['12', 1], ['16', 1], ['34', 1]]),
  '02': new Weighted([['00', 1]]),
  '03': new Weighted([['74', 3], ['15', 1], ['62', 1], ['14', 1]]),
  '04': new Weighted([['63', 6], ['64', 2], ['66', 2]]),
  '08': new Weighted([
    ['01', 55], ['71', 15], ['73', 10], ['63', 5], ['54', 5], ['02', 3], ['80', 2], ['75', 3], ['70', 2],
  ]),
};

// Naturezas jurídicas by how often companies have them.
const NATURES = new Weighted([
  ['2135', 470], ['2062', 390], ['2305', 25], ['2240', 20], ['2054', 8], ['2046', 1], ['2321', 3], ['2143', 3],
  ['4120', 5], ['3999', 40], ['3085', 20], ['3220', 10], ['3069', 1], ['1244', 0.5], ['1031', 2], ['1120', 1],
]);

// Porte: `01` micro, `03` small (EPP), `05` other, `00` not informed.
const INDIVIDUAL_SIZES = new Weighted([['01', 95], ['03', 4], ['05', 1]]);
const COMPANY_SIZES = new Weighted([['01', 62], ['03', 12], ['05', 25], ['00', 1]]);

const AGE_BANDS = new Weighted([
  ['1', 3], ['2', 15], ['3', 140], ['4', 270], ['5', 250], ['6', 170], ['7', 100], ['8', 40], ['9', 12],
]);

const NO_REPRESENTATIVE = ['***000000**', '', '00'] as const;

// ---------------------------------------------------------------------------------------------
// The release.

interface Company {
  index: number;
  root: string;
  alphanumeric: boolean;
  name: string;
  tradeName: string;
  /** What the business calls itself, for its e-mail domain; empty for people and institutions. */
  brand: string;
  nature: string;
  /** The qualificação of the person answering for the company. */
  responsible: string;
  capital: string;
  size: string;
  federativeEntity: string;
  cnae: string;
  secondary: readonly string[];
  /** The head office's opening day. */
  opened: number;
  /** The head office's city. */
  city: Municipality;
  mei: boolean;
}

const NO_CODES: readonly string[] = [];

interface ReleaseFile {
  zip: string;
  inner: string;
  lines: () => Iterable<string>;
}

// Days are counted from 1970-01-01 (UTC).
const DAY_MS = 86_400_000;
const FIRST_DAY = Date.UTC(1960, 0, 1) / DAY_MS;
const BUSINESS_START = Date.UTC(1967, 0, 1) / DAY_MS;
const SIMPLES_START = Date.UTC(2007, 6, 1) / DAY_MS;
const MEI_START = Date.UTC(2009, 6, 1) / DAY_MS;
const RECADASTRO_DAY = Date.UTC(2005, 10, 3) / DAY_MS;

/** The files' stamp (`D61011`), their time, and the last day a record of the release may carry. */
function extractionOf(release: string): { stamp: string; mtime: Date; lastDay: number } {
  const match = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(release);
  const year = Number(match?.[1]);
  const month = Number(match?.[2]);
  // Simples and MEI dates need a release after both existed.
  if (!match || year < 2010) throw new RangeError(`release must be YYYY-MM from 2010 on, got ${release}`);
  // The Receita extracts on the second weekend of the month; the Sunday names the files.
  const firstWeekday = new Date(Date.UTC(year, month - 1, 1)).getUTCDay();
  const day = 8 + ((7 - firstWeekday) % 7);
  return {
    stamp: `D${year % 10}${String(month).padStart(2, '0')}${String(day).padStart(2, '0')}`,
    mtime: new Date(year, month - 1, day, 12),
    lastDay: Date.UTC(year, month - 1, day) / DAY_MS - 1,
  };
}

class SyntheticRelease {
  readonly companies: number;
  readonly establishments: number;
  readonly mtime: Date;
  partnerRows = 0;
  simplesRows = 0;
  taxRegimeRows = 0;

  private readonly establishmentsPerCompany: Uint8Array;
  private readonly stamp: string;
  /** The last day of the records: the earlier release's, with `after`. */
  private readonly lastDay: number;
  /** With `after`, the days between the two extractions, when this month's changes happened. */
  private readonly news: { from: number; to: number };
  /** With `after`, the share of establishments changed this month, in millionths. */
  private readonly drift: number;
  private readonly dates: string[] = [];
  private readonly rootStep: number;
  private readonly rootOffset: number;
  private readonly companyRandom = new Random();
  private readonly detailRandom = new Random();

  constructor(
    establishments: number,
    private readonly seed: number,
    release: string,
    after?: GenerateOptions['after'],
  ) {
    if (!Number.isInteger(establishments) || establishments < 1) {
      throw new RangeError(`establishments must be a positive integer, got ${establishments}`);
    }
    const extraction = extractionOf(release);
    if (after && !(after.from < release && after.rate > 0 && after.rate <= 1)) {
      throw new RangeError(`after needs an earlier release than ${release} and a rate above 0 up to 1`);
    }
    this.stamp = extraction.stamp;
    this.mtime = extraction.mtime;
    this.lastDay = after ? extractionOf(after.from).lastDay : extraction.lastDay;
    this.news = { from: this.lastDay + 1, to: extraction.lastDay };
    this.drift = Math.round((after?.rate ?? 0) * 1_000_000);
    for (let d = FIRST_DAY; d <= extraction.lastDay; d++) {
      this.dates.push(new Date(d * DAY_MS).toISOString().slice(0, 10).replaceAll('-', ''));
    }

    // Roots are an affine bijection of the company index modulo 10^8: distinct without a set.
    const step = 1 + 2 * (mix(seed ^ 0x51ed270b) % 49_999_999);
    this.rootStep = step % 5 === 0 ? step + 2 : step;
    this.rootOffset = mix(seed ^ 0x2545f491) % 100_000_000;

    const counts = new Uint8Array(establishments);
    let companies = 0;
    for (let total = 0; total < establishments; companies++) {
      const key = recordKey(seed, Stream.Branches, companies);
      // Most roots are a lone head office; about one in five also has one to three branches.
      const wanted = key % 100 < 80 ? 1 : 2 + ((key >>> 8) % 3);
      counts[companies] = Math.min(wanted, establishments - total);
      total += counts[companies]!;
    }
    this.companies = companies;
    this.establishmentsPerCompany = counts.subarray(0, companies);
    let written = establishments;
    if (this.drift) {
      for (let index = 0; index < companies; index++) {
        for (let order = 0; order < counts[index]!; order++) if (this.gone(index, order)) written--;
        if (this.grows(index)) written++;
      }
    }
    this.establishments = written;
  }

  // With `after`, what happened this month, each a pure function of the seed and the record.
  private driftKey(index: number, slot: number): number {
    return this.establishmentKey(Stream.Drift, index, slot) % 1_000_000;
  }

  /** An establishment no longer in the files. */
  private gone(index: number, order: number): boolean {
    return this.driftKey(index, order) < this.drift / 20;
  }

  /** An establishment changed this month. */
  private changed(index: number, order: number): boolean {
    return this.driftKey(index, order) < this.drift;
  }

  /** A company with a new partner and a branch opened this month (slot 7: a company has at most four establishments). */
  private grows(index: number): boolean {
    return this.driftKey(index, 7) < this.drift / 4;
  }

  private newsDay(r: Random): string {
    return this.date(this.news.from + r.int(this.news.to - this.news.from + 1));
  }

  /** One change of this month to an establishment's row: closed or suspended, moved, new contact, or new activity. */
  private change(fields: string[], company: Company, r: Random): void {
    const kind = r.next();
    const abroad = fields[19] === 'EX';
    if (kind < 0.4 || abroad) {
      const status = r.pick(['08', '04', '03'] as const);
      fields[5] = status;
      fields[6] = this.newsDay(r);
      fields[7] = REASONS[status]!.pick(r);
    } else if (kind < 0.65) {
      const [low, high] = CEP_RANGES[fields[19]!]!;
      fields[14] = r.pick(STREETS);
      fields[15] = String(1 + r.int(3000));
      fields[18] = String(low + r.int(high - low + 1)).padStart(5, '0') + r.digits(3);
    } else if (kind < 0.85) {
      fields[21] ||= company.city.ddd;
      fields[22] = String(2 + r.int(8)) + r.digits(7);
      fields[27] = email(r, company);
    } else {
      let cnae = r.pick(BUSINESS_CNAES);
      while (cnae === fields[11]) cnae = r.pick(BUSINESS_CNAES);
      fields[11] = cnae;
    }
  }

  files(): ReleaseFile[] {
    const parts = [...Array(10).keys()];
    const lookup = (zip: string, suffix: string, rows: readonly CodeTableEntry[]): ReleaseFile => ({
      zip,
      inner: `F.K03200$Z.${this.stamp}.${suffix}`,
      lines: () => rows.map((row) => csvLine([row.code, row.description])),
    });
    return [
      ...parts.map((part) => ({
        zip: `Empresas${part}.zip`,
        inner: `K3241.K03200Y${part}.${this.stamp}.EMPRECSV`,
        lines: () => this.companyLines(part),
      })),
      ...parts.map((part) => ({
        zip: `Estabelecimentos${part}.zip`,
        inner: `K3241.K03200Y${part}.${this.stamp}.ESTABELE`,
        lines: () => this.establishmentLines(part),
      })),
      ...parts.map((part) => ({
        zip: `Socios${part}.zip`,
        inner: `K3241.K03200Y${part}.${this.stamp}.SOCIOCSV`,
        lines: () => this.partnerLines(part),
      })),
      { zip: 'Simples.zip', inner: `F.K03200$W.SIMPLES.CSV.${this.stamp}`, lines: () => this.simplesLines() },
      lookup('Cnaes.zip', 'CNAECSV', CNAE_SUBCLASSES),
      lookup('Motivos.zip', 'MOTICSV', REGISTRATION_REASONS),
      lookup('Municipios.zip', 'MUNICCSV', MUNICIPALITIES.map((city) => ({ code: city.code, description: city.name }))),
      lookup('Naturezas.zip', 'NATJUCSV', LEGAL_NATURES),
      lookup('Paises.zip', 'PAISCSV', COUNTRIES),
      lookup('Qualificacoes.zip', 'QUALSCSV', PARTNER_QUALIFICATIONS),
      ...TAX_REGIME_FILES.map((name) => ({
        zip: `${name}.zip`,
        inner: `${name}.csv`,
        lines: () => this.taxRegimeLines(name),
      })),
    ];
  }

  /**
   * A tax-regime file (published apart, comma-separated with a header, masked CNPJs): for the
   * last three years before the release, the head offices outside the Simples that filed under
   * this form; non-profits are immune or exempt. A few rows name a branch no file has, as real
   * files do.
   */
  private *taxRegimeLines(file: TaxRegimeFile): Generator<string> {
    yield 'ano,cnpj,cnpj_da_scp,forma_de_tributacao,quantidade_de_escrituracoes\n';
    const lastYear = new Date(this.lastDay * DAY_MS).getUTCFullYear() - 1;
    for (let index = 0; index < this.companies; index++) {
      const company = this.company(index);
      const form = this.taxForm(company);
      if (!form || TAX_FORM_FILE[form] !== file) continue;
      const r = this.detailRandom.reset(recordKey(this.seed, Stream.TaxRegime, index));
      const orphan = r.chance(0.005);
      const order = orphan ? '0999' : '0001';
      const cnpj = maskCnpj(company.root + order + cnpjCheckDigits(company.root + order));
      const firstYear = Math.max(new Date(company.opened * DAY_MS).getUTCFullYear(), lastYear - 2);
      for (let year = firstYear; year <= lastYear; year++) {
        this.taxRegimeRows++;
        yield `${year},${cnpj},0,${form},${1 + r.int(2)}\n`;
      }
    }
  }

  /** The form a company files under, or null (Simples, MEI, public bodies, or no filing). */
  private taxForm(company: Company): TaxForm | null {
    const key = recordKey(this.seed, Stream.TaxRegime, company.index) % 1000;
    if (company.nature.startsWith('1')) return null;
    // About one tax-regime row per ten establishments, as the published zips' sizes suggest
    // (2025-01: 56 MB of short rows against 4.3 GB of Estabelecimentos).
    if (company.nature.startsWith('3')) return key < 120 ? 'IMUNE DO IRPJ' : key < 200 ? 'ISENTA DO IRPJ' : null;
    if (company.nature === '2135' || key >= 175) return null;
    if (this.simples(company)?.[1] === 'S') return null;
    return key < 130 ? 'LUCRO PRESUMIDO' : key < 170 ? 'LUCRO REAL' : 'LUCRO ARBITRADO';
  }

  // A company's Empresas and Socios rows share a part; its establishments scatter over all ten.
  private companyPart(index: number): number {
    return recordKey(this.seed, Stream.CompanyPart, index) % 10;
  }

  private *companyLines(part: number): Generator<string> {
    for (let index = 0; index < this.companies; index++) {
      if (this.companyPart(index) !== part) continue;
      const c = this.company(index);
      yield csvLine([c.root, c.name, c.nature, c.responsible, c.capital, c.size, c.federativeEntity]);
    }
  }

  private *establishmentLines(part: number): Generator<string> {
    for (let index = 0; index < this.companies; index++) {
      let company: Company | undefined;
      const count = this.establishmentsPerCompany[index]!;
      for (let order = 0; order < count; order++) {
        if (this.establishmentKey(Stream.EstablishmentPart, index, order) % 10 !== part) continue;
        if (this.drift && this.gone(index, order)) continue;
        company ??= this.company(index);
        const fields = this.establishment(company, order);
        if (this.drift && this.changed(index, order)) this.change(fields, company, this.detailRandom.reset(this.establishmentKey(Stream.Drift, index, order)));
        yield csvLine(fields);
      }
      if (this.drift && this.grows(index) && this.establishmentKey(Stream.EstablishmentPart, index, count) % 10 === part) {
        // A branch opened this month, active since.
        const fields = this.establishment((company ??= this.company(index)), count);
        const day = this.newsDay(this.detailRandom.reset(this.establishmentKey(Stream.Drift, index, count)));
        [fields[5], fields[6], fields[7], fields[10]] = ['02', day, '00', day];
        yield csvLine(fields);
      }
    }
  }

  private *partnerLines(part: number): Generator<string> {
    for (let index = 0; index < this.companies; index++) {
      if (this.companyPart(index) !== part) continue;
      for (const row of this.partners(this.company(index))) {
        this.partnerRows++;
        yield csvLine(row);
      }
    }
  }

  private *simplesLines(): Generator<string> {
    for (let index = 0; index < this.companies; index++) {
      const row = this.simples(this.company(index));
      if (!row) continue;
      this.simplesRows++;
      yield csvLine(row);
    }
  }

  /** Establishments are keyed in eight slots per company; a company has at most four. */
  private establishmentKey(stream: Stream, index: number, order: number): number {
    return recordKey(this.seed, stream, index * 8 + order);
  }

  private date(day: number): string {
    return this.dates[day - FIRST_DAY]!;
  }

  /** A day from `from` to the day before the extraction, uniformly. */
  private dayAfter(random: Random, from: number): number {
    return from + random.int(this.lastDay - from + 1);
  }

  private root(index: number, alphanumeric: boolean): string {
    const digits = String((this.rootStep * index + this.rootOffset) % 100_000_000).padStart(8, '0');
    if (!alphanumeric) return digits;
    // Letters replace some digits; a letter's code minus 65 is its digit modulo 10, so the
    // numeric root stays recoverable and alphanumeric roots stay distinct too.
    const key = recordKey(this.seed, Stream.RootLetters, index);
    let root = '';
    for (let i = 0; i < 8; i++) {
      const digit = digits.charCodeAt(i) - 48;
      const bits = (key >>> (i * 3)) & 7;
      if (i === 0 || bits < 3) {
        const tens = digit <= 5 ? bits % 3 : bits % 2;
        root += String.fromCharCode(65 + digit + 10 * tens);
      } else root += digits[i];
    }
    return root;
  }

  private isAlphanumeric(index: number): boolean {
    return recordKey(this.seed, Stream.Alphanumeric, index) % 100 === 0;
  }

  private company(index: number): Company {
    const r = this.companyRandom.reset(recordKey(this.seed, Stream.Company, index));
    const alphanumeric = this.isAlphanumeric(index);
    const root = this.root(index, alphanumeric);
    const nature = NATURES.pick(r);
    const city = CITY_PICK.pick(r);
    // Alphanumeric roots (issued from July 2026) go to new registrations; the rest skew recent.
    const opened = alphanumeric
      ? this.lastDay - r.int(90)
      : this.lastDay - Math.floor((this.lastDay - BUSINESS_START) * r.next() ** 2);
    const c: Company = {
      index, root, alphanumeric, nature, city, opened, name: '', tradeName: '', brand: '', responsible: '16',
      capital: '0,00', size: '05', federativeEntity: '', cnae: '', secondary: NO_CODES, mei: false,
    };
    switch (nature) {
      case '2135': {
        const owner = personName(r);
        c.mei = r.chance(0.75);
        const shown = r.next();
        // An MEI's name usually embeds the owner's CPF or starts with the formatted root.
        if (!c.mei || shown < 0.1) c.name = owner;
        else c.name = shown < 0.8 ? `${owner} ${r.digits(11)}` : `${formatRoot(root)} ${owner}`;
        this.activity(r, c, true);
        c.responsible = '50';
        c.capital = r.chance(0.4) ? '0,00' : money(1000 * (1 + r.int(20)));
        c.size = INDIVIDUAL_SIZES.pick(r);
        break;
      }
      case '2062':
      case '2305':
      case '2240':
      case '2054':
      case '2046': {
        const corporation = nature === '2054' || nature === '2046';
        const suffix = nature === '2305' ? ' EIRELI' : corporation ? r.pick([' S.A.', ' S/A']) : LTDA_SUFFIXES.pick(r);
        c.name = this.activity(r, c, false) + suffix;
        c.responsible = corporation ? r.pick(['10', '16']) : nature === '2305' ? '65' : r.chance(0.85) ? '49' : '05';
        c.capital = money(corporation ? 1_000_000 * (1 + r.int(900)) : capitalAmount(r));
        c.size = corporation ? '05' : r.chance(0.001) ? '' : COMPANY_SIZES.pick(r);
        break;
      }
      case '2321':
        c.name = `${personName(r)} SOCIEDADE INDIVIDUAL DE ADVOCACIA`;
        c.cnae = '6911701';
        c.responsible = '65';
        c.capital = money(10_000 * (1 + r.int(10)));
        c.size = '01';
        break;
      case '4120':
        c.name = personName(r);
        c.cnae = r.pick(['0151201', '0115600', '0134200', '0119906']);
        c.responsible = '59';
        c.size = '01';
        break;
      case '2143':
        [c.name, c.cnae] = r.pick([
          ['COOPERATIVA DE CREDITO', '6424703'],
          ['COOPERATIVA AGROPECUARIA', '4623199'],
          ['COOPERATIVA DE TRABALHO MEDICO', '8630503'],
          ['COOPERATIVA DE TRANSPORTES', '4930202'],
        ] as const);
        c.name += ` ${r.pick(DISTINCTIVES)}`;
        c.capital = money(capitalAmount(r));
        break;
      case '3999':
      case '3069':
      case '3085':
      case '3220':
        [c.name, c.cnae] = nonProfit(r, nature, city);
        if (nature === '3085') c.responsible = '19';
        break;
      default:
        [c.name, c.cnae] = publicBody(r, nature, city);
        c.federativeEntity = `${city.name} - ${city.uf}`;
        c.responsible = '05';
    }
    return c;
  }

  /** Picks a business's activities and trade name; returns the name it is registered under. */
  private activity(r: Random, c: Company, individual: boolean): string {
    const profile = PROFILES.pick(r);
    c.cnae = profile ? (r.chance(0.7) ? profile.cnaes[0]! : r.pick(profile.cnaes)) : r.pick(BUSINESS_CNAES);
    const word = profile ? r.pick(profile.words) : sectorWord(r, c.cnae);
    const core = businessCore(r, word);
    c.tradeName = individual && r.chance(0.6) ? '' : r.chance(0.5) ? `${word} ${r.pick(DISTINCTIVES)}` : core;
    c.brand = c.tradeName || core;
    if (r.chance(0.45)) {
      const related = profile ? profile.cnaes : CNAES_BY_DIVISION.get(c.cnae.slice(0, 2))!;
      const secondary: string[] = [];
      for (let n = 1 + r.int(5); n > 0; n--) {
        const code = r.chance(0.85) ? r.pick(related) : r.pick(BUSINESS_CNAES);
        if (code !== c.cnae && !secondary.includes(code)) secondary.push(code);
      }
      c.secondary = secondary;
    }
    return core;
  }

  private establishment(company: Company, order: number): string[] {
    const r = this.detailRandom.reset(this.establishmentKey(Stream.Establishment, company.index, order));
    const head = order === 0;
    // New branches get alphanumeric ordens: all of an alphanumeric root's, a few of older roots'.
    const branchOrder =
      company.alphanumeric || r.chance(0.01)
        ? `0${order}${letter(r)}${letter(r)}`
        : String(order + 1).padStart(4, '0');
    const cnpjOrder = head ? '0001' : branchOrder;
    const opened = head ? company.opened : this.dayAfter(r, company.opened);

    const status = STATUSES.pick(r);
    // Active registrations older than the 2005 recadastramento mostly carry its date.
    const activeSince = opened < RECADASTRO_DAY && r.chance(0.8) ? RECADASTRO_DAY : opened;
    const statusDay = r.chance(0.001) ? '0' : this.date(status === '02' ? activeSince : this.dayAfter(r, opened));
    const special = r.chance(0.0015);

    const cnae = head || r.chance(0.9) || company.secondary.length === 0 ? company.cnae : r.pick(company.secondary);
    const secondary = head ? company.secondary : company.secondary.filter(() => r.chance(0.7));

    const fields = [
      company.root,
      cnpjOrder,
      cnpjCheckDigits(company.root + cnpjOrder),
      head ? '1' : '2',
      company.tradeName,
      status,
      statusDay,
      REASONS[status]!.pick(r),
      '',
      '',
      this.date(opened),
      cnae,
      secondary.join(','),
    ];
    if (r.chance(0.003)) {
      const [place, country] = r.pick(ABROAD_PLACES);
      fields[8] = place;
      fields[9] = country;
      const street = [`${r.pick(SURNAMES)} STREET`, String(1 + r.int(900))];
      fields.push('', ...street, '', '', '', 'EX', ABROAD_MUNICIPALITY_CODE, '', '', '', '', '', '');
    } else {
      // Branches mostly open in the head office's city or state.
      const nearby = r.chance(0.75) ? CITY_PICK_BY_UF.get(company.city.uf)! : CITY_PICK;
      const city = head || r.chance(0.6) ? company.city : nearby.pick(r);
      const [low, high] = CEP_RANGES[city.uf]!;
      fields.push(
        STREET_TYPES.pick(r),
        r.chance(0.15) ? `${r.pick(MALE_NAMES)} ${r.pick(SURNAMES)}` : r.pick(STREETS),
        r.chance(0.05) ? 'S/N' : String(1 + Math.floor(r.next() ** 2 * 3000)),
        r.chance(0.5) ? '' : `${r.pick(COMPLEMENTS)} ${1 + r.int(30)}`,
        r.chance(0.25) ? 'CENTRO' : r.pick(DISTRICTS),
        String(low + r.int(high - low + 1)).padStart(5, '0') + r.digits(3),
        city.uf,
        city.code,
        ...phone(r, city, 0.92),
        ...phone(r, city, 0.18),
        ...phone(r, city, 0.04),
      );
    }
    fields.push(r.chance(0.4) ? email(r, company) : '');
    fields.push(...(special ? [r.pick(SPECIAL_SITUATIONS), this.date(this.dayAfter(r, opened))] : ['', '']));
    return fields;
  }

  private partners(company: Company): string[][] {
    const r = this.detailRandom.reset(recordKey(this.seed, Stream.Partners, company.index));
    const plan = PARTNER_PLANS[company.nature];
    if (!plan) return [];
    const rows: string[][] = [];
    const count = plan.count(r);
    for (let n = 0; n < count; n++) {
      const joined = r.chance(0.002) ? '' : this.date(this.dayAfter(r, company.opened));
      const qualification = n === 0 ? plan.first : r.pick(plan.others);
      const kind = plan.mixed ? r.next() : 1;
      if (kind < 0.05 && this.companies > 1) {
        // Another company of the release holds shares, by its head office's CNPJ.
        const holder = this.company((company.index + 1 + r.int(this.companies - 1)) % this.companies);
        if (CORPORATE_NATURES.has(holder.nature)) {
          const cnpj = holder.root + '0001' + cnpjCheckDigits(holder.root + '0001');
          rows.push([company.root, '1', holder.name, cnpj, '22', joined, '', ...NO_REPRESENTATIVE, '0']);
          continue;
        }
      } else if (kind < 0.07) {
        const person = r.chance(0.5);
        const [, country] = r.pick(ABROAD_PLACES);
        rows.push([
          company.root, '3', r.pick(person ? FOREIGN_PEOPLE : FOREIGN_COMPANIES), '***999999**', person ? '38' : '37',
          joined, country, maskedCpf(r), personName(r), '17', person ? AGE_BANDS.pick(r) : '0',
        ]);
        continue;
      }
      const age = AGE_BANDS.pick(r);
      // Minors act through a parent.
      const representative = age === '1' ? [maskedCpf(r), personName(r), r.pick(['14', '15'])] : NO_REPRESENTATIVE;
      rows.push([company.root, '2', personName(r), maskedCpf(r), qualification, joined, '', ...representative, age]);
    }
    // A company that takes partners beyond its first (an EIRELI or a lone-owner body does not) takes one this month.
    if (this.drift && this.grows(company.index) && plan.others.length > 0) {
      const n = this.detailRandom.reset(this.establishmentKey(Stream.Drift, company.index, 7));
      rows.push([company.root, '2', personName(n), maskedCpf(n), n.pick(plan.others), this.newsDay(n), '', ...NO_REPRESENTATIVE, AGE_BANDS.pick(n)]);
    }
    return rows;
  }

  private simples(company: Company): string[] | null {
    if (!SIMPLES_NATURES.has(company.nature) || (company.size !== '01' && company.size !== '03')) return null;
    const r = this.detailRandom.reset(recordKey(this.seed, Stream.Simples, company.index));
    const none = '00000000';
    const joined = this.date(Math.max(company.opened, SIMPLES_START));
    if (company.mei) {
      const meiSince = this.date(Math.max(company.opened, MEI_START));
      if (r.chance(0.75)) return [company.root, 'S', joined, none, 'S', meiSince, none];
      const left = this.date(this.dayAfter(r, Math.max(company.opened, MEI_START)));
      return [company.root, r.chance(0.5) ? 'S' : 'N', joined, r.chance(0.5) ? none : left, 'N', meiSince, left];
    }
    const mei = r.chance(0.02) ? '' : 'N';
    if (r.chance(0.65)) return [company.root, 'S', joined, none, mei, none, none];
    const excluded = this.date(this.dayAfter(r, Math.max(company.opened, SIMPLES_START)));
    return [company.root, 'N', joined, excluded, mei, none, none];
  }
}

const TAX_REGIME_FILES = ['Lucro Real', 'Lucro Presumido', 'Lucro Arbitrado', 'Imunes e Isentas'] as const;
type TaxRegimeFile = (typeof TAX_REGIME_FILES)[number];
type TaxForm = 'LUCRO REAL' | 'LUCRO PRESUMIDO' | 'LUCRO ARBITRADO' | 'IMUNE DO IRPJ' | 'ISENTA DO IRPJ';
const TAX_FORM_FILE: Record<TaxForm, TaxRegimeFile> = {
  'LUCRO REAL': 'Lucro Real',
  'LUCRO PRESUMIDO': 'Lucro Presumido',
  'LUCRO ARBITRADO': 'Lucro Arbitrado',
  'IMUNE DO IRPJ': 'Imunes e Isentas',
  'ISENTA DO IRPJ': 'Imunes e Isentas',
};

/** `11.222.333/0001-81`, as the tax-regime files write CNPJs. */
function maskCnpj(cnpj: string): string {
  return `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;
}

const SIMPLES_NATURES = new Set(['2135', '2062', '2305', '2240', '2321']);
const CORPORATE_NATURES = new Set(['2062', '2054', '2046', '2305']);

interface PartnerPlan {
  count: (r: Random) => number;
  first: string;
  others: readonly string[];
  /** Whether companies and foreigners may be partners, not only resident people. */
  mixed: boolean;
}

const LIMITED_PARTNERS = new Weighted([[1, 35], [2, 45], [3, 12], [4, 5], [5, 3]]);
const PARTNER_PLANS: Record<string, PartnerPlan> = {
  '2062': { count: (r) => LIMITED_PARTNERS.pick(r), first: '49', others: ['49', '22', '22'], mixed: true },
  '2240': { count: (r) => 1 + r.int(3), first: '49', others: ['49', '22'], mixed: true },
  '2305': { count: () => 1, first: '65', others: [], mixed: false },
  '2321': { count: () => 1, first: '65', others: [], mixed: false },
  '2054': { count: (r) => 2 + r.int(4), first: '16', others: ['10', '10', '08'], mixed: false },
  '2046': { count: (r) => 3 + r.int(3), first: '16', others: ['10', '08', '08'], mixed: false },
  '2143': { count: (r) => 2 + r.int(2), first: '16', others: ['10', '33'], mixed: false },
  '3999': { count: (r) => 1 + r.int(2), first: '16', others: ['33', '18'], mixed: false },
  '3220': { count: (r) => 1 + r.int(2), first: '16', others: ['33', '18'], mixed: false },
  '3069': { count: () => 1, first: '16', others: [], mixed: false },
  '3085': { count: () => 1, first: '19', others: [], mixed: false },
};

function personName(r: Random): string {
  const names = r.chance(0.5) ? MALE_NAMES : FEMALE_NAMES;
  let name = r.pick(names);
  if (r.chance(0.3)) name += ` ${r.pick(names)}`;
  name += ` ${r.pick(r.chance(0.35) ? JOINED_SURNAMES : SURNAMES)}`;
  if (r.chance(0.6)) name += ` ${r.pick(SURNAMES)}`;
  return name;
}

function businessCore(r: Random, word: string): string {
  const style = r.next();
  if (style < 0.45) return `${word} ${r.pick(DISTINCTIVES)}`;
  if (style < 0.7) return `${word} ${r.pick(SURNAMES)}`;
  if (style < 0.8) return `${r.pick(SURNAMES)} & ${r.pick(SURNAMES)} ${word}`;
  if (style < 0.9) return `${r.pick(DISTINCTIVES)} ${word}`;
  return `${r.pick(r.chance(0.5) ? MALE_NAMES : FEMALE_NAMES)} ${word}`;
}

function sectorWord(r: Random, cnae: string): string {
  const division = Number(cnae.slice(0, 2));
  return r.pick(SECTOR_WORDS.find(([last]) => division <= last)![1]);
}

function nonProfit(r: Random, nature: string, city: Municipality): readonly [name: string, cnae: string] {
  switch (nature) {
    case '3085':
      return [`CONDOMINIO ${r.pick(['EDIFICIO', 'RESIDENCIAL'])} ${r.pick(DISTINCTIVES)}`, '8112500'];
    case '3220': {
      const name = [
        'IGREJA EVANGELICA ASSEMBLEIA DE DEUS',
        `PAROQUIA ${r.pick(['SAO JOSE', 'SANTO ANTONIO', 'NOSSA SENHORA APARECIDA', 'SAO SEBASTIAO'])}`,
        `IGREJA BATISTA ${r.pick(DISTINCTIVES)}`,
        `CENTRO ESPIRITA ${r.pick(DISTINCTIVES)}`,
        `MITRA DIOCESANA DE ${city.name}`,
      ];
      return [r.pick(name), '9491000'];
    }
    case '3069':
      return [`FUNDACAO ${personName(r)}`, r.pick(['9430800', '8531700', '8800600'])];
    default: {
      const [name, cnae] = r.pick([
        ['ASSOCIACAO DE MORADORES DO BAIRRO', '9430800'],
        ['ASSOCIACAO DOS PRODUTORES RURAIS DE', '9411100'],
        ['ASSOCIACAO DE PAIS E MESTRES DA ESCOLA', '9493600'],
        ['ASSOCIACAO ATLETICA', '9312300'],
        ['ASSOCIACAO BENEFICENTE', '8800600'],
      ] as const);
      const place = cnae === '9430800' ? r.pick(DISTRICTS) : cnae === '9411100' ? city.name : r.pick(DISTINCTIVES);
      return [`${name} ${place}`, cnae];
    }
  }
}

function publicBody(r: Random, nature: string, city: Municipality): readonly [name: string, cnae: string] {
  switch (nature) {
    case '1244':
      return [`MUNICIPIO DE ${city.name}`, '8411600'];
    case '1120':
      return r.chance(0.5)
        ? [`SERVICO AUTONOMO DE AGUA E ESGOTO DE ${city.name}`, '3600601']
        : [`INSTITUTO DE PREVIDENCIA DOS SERVIDORES MUNICIPAIS DE ${city.name}`, '8430200'];
    default: {
      const area = r.pick(['SAUDE', 'EDUCACAO', 'ASSISTENCIA SOCIAL', 'OBRAS', 'FAZENDA']);
      return [`SECRETARIA MUNICIPAL DE ${area} DE ${city.name}`, area === 'SAUDE' ? '8412400' : '8411600'];
    }
  }
}

const CAPITALS = new Weighted([
  [1000, 10], [5000, 12], [10000, 18], [20000, 12], [30000, 8], [50000, 12], [80000, 4], [100000, 10], [150000, 3],
  [200000, 4], [500000, 3], [1000000, 2], [5000000, 1],
]);

function capitalAmount(r: Random): number {
  // Now and then an uneven amount with cents, as the registry has.
  return r.chance(0.1) ? (1000 + r.int(500_000_00)) / 100 : CAPITALS.pick(r);
}

function money(amount: number): string {
  return amount.toFixed(2).replace('.', ',');
}

function formatRoot(root: string): string {
  return `${root.slice(0, 2)}.${root.slice(2, 5)}.${root.slice(5, 8)}`;
}

function letter(r: Random): string {
  return String.fromCharCode(65 + r.int(26));
}

function maskedCpf(r: Random): string {
  return `***${r.digits(6)}**`;
}

function phone(r: Random, city: Municipality, probability: number): [string, string] {
  return r.chance(probability) ? [city.ddd, String(2 + r.int(8)) + r.digits(7)] : ['', ''];
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '').slice(0, 24);
}

function email(r: Random, company: Company): string {
  const address =
    company.brand && r.chance(0.5)
      ? `${r.pick(EMAIL_PREFIXES)}@${slug(company.brand)}.com.br`
      : `${r.pick(FEMALE_NAMES).toLowerCase()}.${r.pick(SURNAMES).toLowerCase()}${r.int(100)}@${r.pick(EMAIL_DOMAINS)}`;
  const style = r.next();
  // Free text in the registry: mostly lower case, a good share upper case, some capitalised.
  if (style < 0.55) return address;
  if (style < 0.9) return address.toUpperCase();
  return address[0]!.toUpperCase() + address.slice(1);
}
