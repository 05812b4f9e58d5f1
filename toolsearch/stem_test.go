package toolsearch

import "testing"

// The examples of Porter's paper, step by step, and words of tool APIs.
func TestStem_PorterExamples(t *testing.T) {
	cases := map[string]string{
		// step 1a
		"caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",
		// step 1b
		"feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled",
		"motoring": "motor", "sing": "sing", "conflated": "conflat", "troubled": "troubl",
		"sized": "size", "hopping": "hop", "tanned": "tan", "falling": "fall",
		"hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file",
		// step 1c
		"happy": "happi", "sky": "sky",
		// step 2
		"relational": "relat", "conditional": "condit", "rational": "ration",
		"valenci": "valenc", "hesitanci": "hesit", "digitizer": "digit",
		"conformabli": "conform", "radicalli": "radic", "differentli": "differ",
		"vileli": "vile", "analogousli": "analog", "vietnamization": "vietnam",
		"predication": "predic", "operator": "oper", "feudalism": "feudal",
		"decisiveness": "decis", "hopefulness": "hope", "callousness": "callous",
		"formaliti": "formal", "sensitiviti": "sensit", "sensibiliti": "sensibl",
		// step 3
		"triplicate": "triplic", "formative": "form", "formalize": "formal",
		"electriciti": "electr", "electrical": "electr", "hopeful": "hope", "goodness": "good",
		// step 4
		"revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",
		"gyroscopic": "gyroscop", "adjustable": "adjust", "defensible": "defens",
		"irritant": "irrit", "replacement": "replac", "adjustment": "adjust",
		"dependent": "depend", "adoption": "adopt", "homologou": "homolog",
		"communism": "commun", "activate": "activ", "angulariti": "angular",
		"homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler",
		// step 5
		"probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",
		// whole words
		"generalizations": "gener", "oscillators": "oscil",
		// tool vocabulary
		"issues": "issu", "issue": "issu", "created": "creat", "create": "creat",
		"creating": "creat", "messages": "messag", "message": "messag", "files": "file",
		"listing": "list", "repositories": "repositori", "repository": "repositori",
		"deleted": "delet", "deletes": "delet", "scheduled": "schedul", "schedule": "schedul",
		// left alone
		"news": "news", "production": "production",
		"s3": "s3", "ec2": "ec2", "go": "go", "pr": "pr", "café": "café", "": "",
	}
	for in, want := range cases {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}
