/**
 * Word lists the sandbox employer generator draws from. Invented but plausible: common US
 * names, real cities with their ZIP codes and area codes, in states with and without a state
 * income tax, so generated pay statements show both.
 */

export const FEMALE_FIRST_NAMES = [
  'Olivia', 'Emma', 'Charlotte', 'Amelia', 'Sophia', 'Mia', 'Isabella', 'Ava', 'Evelyn', 'Harper',
  'Luna', 'Camila', 'Gianna', 'Elizabeth', 'Eleanor', 'Ella', 'Abigail', 'Sofia', 'Avery', 'Scarlett',
  'Emily', 'Aria', 'Penelope', 'Chloe', 'Layla', 'Mila', 'Nora', 'Hazel', 'Madison', 'Ellie',
  'Lily', 'Nova', 'Isla', 'Grace', 'Violet', 'Aurora', 'Riley', 'Zoey', 'Willow', 'Emilia',
  'Priya', 'Mei', 'Aaliyah', 'Fatima', 'Ximena', 'Yuki', 'Keisha', 'Lucia', 'Ana', 'Hannah',
] as const;

export const MALE_FIRST_NAMES = [
  'Liam', 'Noah', 'Oliver', 'James', 'Elijah', 'William', 'Henry', 'Lucas', 'Benjamin', 'Theodore',
  'Mateo', 'Levi', 'Sebastian', 'Daniel', 'Jack', 'Michael', 'Alexander', 'Owen', 'Asher', 'Samuel',
  'Ethan', 'Leo', 'Jackson', 'Mason', 'Ezra', 'John', 'Hudson', 'Luca', 'Aiden', 'Joseph',
  'David', 'Jacob', 'Logan', 'Luke', 'Julian', 'Gabriel', 'Grayson', 'Wyatt', 'Matthew', 'Maverick',
  'Arjun', 'Wei', 'Malik', 'Omar', 'Santiago', 'Kenji', 'Andre', 'Diego', 'Thanh', 'Isaac',
] as const;

export const NEUTRAL_FIRST_NAMES = ['Alex', 'Jordan', 'Taylor', 'Morgan', 'Casey', 'Quinn', 'Rowan', 'Sage', 'Remy', 'Skyler'] as const;

export const LAST_NAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez',
  'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin',
  'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson',
  'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores',
  'Green', 'Adams', 'Nelson', 'Baker', 'Hall', 'Rivera', 'Campbell', 'Mitchell', 'Carter', 'Roberts',
  'Patel', 'Kim', 'Chen', 'Okafor', 'Nakamura', 'Kowalski', 'O\'Brien', 'Schmidt', 'Rossi', 'Haddad',
  'Singh', 'Cohen', 'Murphy', 'Bailey', 'Cooper', 'Reed', 'Bell', 'Morales', 'Ortiz', 'Gutierrez',
] as const;

export interface City {
  city: string;
  /** Two-letter state code. */
  state: string;
  postalCode: string;
  areaCode: string;
}

/** States without a tax on wages are marked; the payroll computation knows which is which. */
export const CITIES: readonly City[] = [
  { city: 'San Francisco', state: 'CA', postalCode: '94107', areaCode: '415' },
  { city: 'Oakland', state: 'CA', postalCode: '94612', areaCode: '510' },
  { city: 'Los Angeles', state: 'CA', postalCode: '90012', areaCode: '213' },
  { city: 'San Diego', state: 'CA', postalCode: '92101', areaCode: '619' },
  { city: 'New York', state: 'NY', postalCode: '10001', areaCode: '212' },
  { city: 'Brooklyn', state: 'NY', postalCode: '11201', areaCode: '718' },
  { city: 'Jersey City', state: 'NJ', postalCode: '07302', areaCode: '201' },
  { city: 'Boston', state: 'MA', postalCode: '02110', areaCode: '617' },
  { city: 'Chicago', state: 'IL', postalCode: '60601', areaCode: '312' },
  { city: 'Denver', state: 'CO', postalCode: '80202', areaCode: '303' },
  { city: 'Atlanta', state: 'GA', postalCode: '30303', areaCode: '404' },
  { city: 'Raleigh', state: 'NC', postalCode: '27601', areaCode: '919' },
  { city: 'Philadelphia', state: 'PA', postalCode: '19103', areaCode: '215' },
  { city: 'Portland', state: 'OR', postalCode: '97204', areaCode: '503' },
  { city: 'Minneapolis', state: 'MN', postalCode: '55401', areaCode: '612' },
  { city: 'Arlington', state: 'VA', postalCode: '22201', areaCode: '703' },
  { city: 'Columbus', state: 'OH', postalCode: '43215', areaCode: '614' },
  { city: 'Salt Lake City', state: 'UT', postalCode: '84101', areaCode: '801' },
  // No state income tax on wages:
  { city: 'Austin', state: 'TX', postalCode: '78701', areaCode: '512' },
  { city: 'Dallas', state: 'TX', postalCode: '75201', areaCode: '214' },
  { city: 'Houston', state: 'TX', postalCode: '77002', areaCode: '713' },
  { city: 'Miami', state: 'FL', postalCode: '33131', areaCode: '305' },
  { city: 'Tampa', state: 'FL', postalCode: '33602', areaCode: '813' },
  { city: 'Seattle', state: 'WA', postalCode: '98101', areaCode: '206' },
  { city: 'Las Vegas', state: 'NV', postalCode: '89101', areaCode: '702' },
  { city: 'Nashville', state: 'TN', postalCode: '37203', areaCode: '615' },
  { city: 'Sioux Falls', state: 'SD', postalCode: '57104', areaCode: '605' },
  { city: 'Anchorage', state: 'AK', postalCode: '99501', areaCode: '907' },
];

export const STREET_NAMES = [
  'Main St', 'Oak Ave', 'Maple St', 'Cedar Ln', 'Pine St', 'Elm St', 'Washington Ave', 'Lake St', 'Hill Rd',
  'Park Ave', 'Market St', 'Mission St', 'Broadway', 'Sunset Blvd', 'River Rd', 'Highland Ave', 'Church St',
  'Spring St', 'Valley View Dr', 'Franklin St', '2nd St', '5th Ave', 'Jefferson St', 'Madison Ave',
] as const;

/** Departments with their sub-departments (children name the parent). */
export const DEPARTMENTS: readonly { name: string; children: readonly string[]; weight: number }[] = [
  { name: 'Engineering', children: ['Platform', 'Product Engineering', 'Data', 'Security'], weight: 30 },
  { name: 'Sales', children: ['Account Executives', 'Sales Development'], weight: 16 },
  { name: 'Customer Success', children: ['Support'], weight: 14 },
  { name: 'Operations', children: ['Facilities', 'Fulfillment'], weight: 12 },
  { name: 'Product', children: ['Design'], weight: 8 },
  { name: 'Marketing', children: [], weight: 7 },
  { name: 'Finance', children: ['Accounting'], weight: 5 },
  { name: 'People', children: ['Recruiting'], weight: 4 },
  { name: 'Legal', children: [], weight: 2 },
];

export const EXECUTIVE_DEPARTMENT = 'Executive';

export const STAFF_TITLES: Record<string, readonly string[]> = {
  Engineering: ['Software Engineer', 'Senior Software Engineer', 'Staff Engineer', 'QA Engineer'],
  Platform: ['Site Reliability Engineer', 'Platform Engineer', 'Senior Platform Engineer'],
  'Product Engineering': ['Frontend Engineer', 'Backend Engineer', 'Full Stack Engineer'],
  Data: ['Data Engineer', 'Data Analyst', 'Data Scientist'],
  Security: ['Security Engineer', 'Security Analyst'],
  Sales: ['Sales Operations Analyst', 'Sales Engineer'],
  'Account Executives': ['Account Executive', 'Senior Account Executive'],
  'Sales Development': ['Sales Development Representative'],
  'Customer Success': ['Customer Success Manager', 'Implementation Specialist'],
  Support: ['Support Specialist', 'Support Agent'],
  Operations: ['Operations Analyst', 'Operations Coordinator'],
  Facilities: ['Facilities Technician', 'Office Coordinator'],
  Fulfillment: ['Warehouse Associate', 'Shipping Clerk'],
  Product: ['Product Manager', 'Senior Product Manager'],
  Design: ['Product Designer', 'UX Researcher'],
  Marketing: ['Marketing Manager', 'Content Strategist', 'Growth Marketer'],
  Finance: ['Financial Analyst', 'Controller'],
  Accounting: ['Staff Accountant', 'Payroll Specialist', 'Accounts Payable Clerk'],
  People: ['HR Generalist', 'People Partner'],
  Recruiting: ['Recruiter', 'Recruiting Coordinator'],
  Legal: ['Corporate Counsel', 'Paralegal'],
};

/** Departments where part of the staff is paid by the hour. */
export const HOURLY_DEPARTMENTS: ReadonlySet<string> = new Set(['Support', 'Facilities', 'Fulfillment', 'Customer Success', 'Operations']);

export const BANKS: readonly string[] = ['First Republic Trust', 'Silicon Valley Savings', 'Chase', 'Wells Fargo', 'Bank of America', 'US Bank'];

export const COMPANY_ENTITIES: readonly (readonly [{ type: string; subtype: string | null }, number])[] = [
  [{ type: 'corporation', subtype: 'c_corporation' }, 5],
  [{ type: 'corporation', subtype: 's_corporation' }, 2],
  [{ type: 'llc', subtype: 's_corporation' }, 2],
  [{ type: 'llc', subtype: 'c_corporation' }, 1],
  [{ type: 'corporation', subtype: 'b_corporation' }, 1],
];

/** IRS campus prefixes an EIN may start with. */
export const EIN_PREFIXES = ['12', '20', '26', '27', '33', '45', '46', '47', '52', '81', '82', '83', '84', '85', '86', '87', '88', '92', '93'] as const;

export const ETHNICITIES: readonly (readonly [string, number])[] = [
  ['white', 40],
  ['hispanic_or_latino', 18],
  ['black_or_african_american', 12],
  ['asian', 14],
  ['two_or_more_races', 5],
  ['american_indian_or_alaska_native', 1],
  ['native_hawaiian_or_pacific_islander', 1],
  ['decline_to_specify', 9],
];

export const MARITAL_STATUSES: readonly (readonly [string, number])[] = [
  ['single', 40],
  ['married', 45],
  ['divorced', 9],
  ['widowed', 2],
  // The public document's name for a status not given; `decline_to_specify` is gender's and ethnicity's.
  ['unknown', 4],
];
