package toolsearch

import "sync"

// Scorer is a ranking function.
type Scorer uint8

const (
	// BM25 is Okapi BM25 over weighted fields (BM25F); see the package doc.
	BM25 Scorer = iota
	// Keyword scores each query term 3 if the name has it, plus 2 if the keywords or
	// category have it, plus 1 if the description has it, out of 6, without regard to
	// frequency or rarity.
	Keyword
)

// Weights are per-field weights. A zero field means its default; a negative one leaves
// the field out.
type Weights struct {
	Name              float64 // default 3
	Description       float64 // default 1
	Keywords          float64 // keywords and category; default 2
	ParamNames        float64 // property names of the parameters schema; default 1
	ParamDescriptions float64 // their descriptions, titles and enum values; default 0.5
}

// Options configure an Index. The zero value is the full lexical search with BM25.
type Options struct {
	// Scorer is the ranking function; zero is BM25.
	Scorer Scorer
	// K1 is BM25's term-frequency saturation; zero means 1.2.
	K1 float64
	// B is BM25's length normalisation, 0 to 1; zero means 0.75, a negative value 0.
	B float64
	// Weights are the BM25F field weights; zero fields take their defaults.
	Weights Weights
	// NameBoost lifts tools whose name the query covers: a tool's score is multiplied by
	// (1 + NameBoost·c)/(1 + NameBoost), c being the share of its name's words (namespace
	// left out) that the query has. Zero means 0.5; negative means none.
	NameBoost float64
	// SynonymWeight is the weight of a query word's synonyms, against 1 for the word
	// itself. Zero means 0.5; negative turns synonyms off.
	SynonymWeight float64
	// Synonyms are the synonym groups; nil means DefaultSynonyms().
	Synonyms [][]string
	// Aliases map query words to namespaces; nil means DefaultAliases().
	Aliases map[string]string
	// HintPenalty multiplies the score of tools outside the namespaces a query names
	// ("in Linear", "on GitHub"). Zero means 0.7; negative turns hints off.
	HintPenalty float64
	// NoStem turns stemming off.
	NoStem bool
	// Plain is textbook Okapi BM25, the baseline of the retrieval benchmark: every field
	// as one text, no stemming, synonyms, field weights, name boost or hints. K1 and B
	// still apply; Scorer and the rest are ignored.
	Plain bool
}

// config is Options with defaults filled in.
type config struct {
	keyword     bool
	plain       bool
	stem        bool
	k1, b       float64
	w           [numFields]float64
	nameBoost   float64
	synWeight   float64
	hintPenalty float64
	syn         map[string][]string // stemmed word → stemmed synonyms
	phrases     map[string][]phrase // first word of a phrase → the phrases it starts
	aliases     map[string]string
}

func (o Options) config() *config {
	c := &config{
		keyword: o.Scorer == Keyword && !o.Plain, plain: o.Plain,
		stem: !o.NoStem && !o.Plain,
		k1:   orDefault(o.K1, 1.2), b: orDefault(o.B, 0.75),
	}
	if c.plain {
		c.w = [numFields]float64{1, 1, 1, 1, 1}
		return c
	}
	c.w = [numFields]float64{
		orDefault(o.Weights.Name, 3), orDefault(o.Weights.Description, 1),
		orDefault(o.Weights.Keywords, 2), orDefault(o.Weights.ParamNames, 1),
		orDefault(o.Weights.ParamDescriptions, 0.5),
	}
	if c.keyword {
		c.w = [numFields]float64{3, 1, 2, 0, 0}
	}
	c.nameBoost = orDefault(o.NameBoost, 0.5)
	c.synWeight = orDefault(o.SynonymWeight, 0.5)
	c.hintPenalty = orDefault(o.HintPenalty, 0.7)
	if c.synWeight > 0 {
		if o.Synonyms == nil {
			c.syn, c.phrases = defaultSynonymMap(c.stem)
		} else {
			c.syn, c.phrases = synonymMap(o.Synonyms, c.term)
		}
	}
	if c.hintPenalty > 0 {
		c.aliases = o.Aliases
		if c.aliases == nil {
			c.aliases = DefaultAliases()
		}
	}
	return c
}

// defaultMaps are the default synonym groups' maps, stemmed and not, built once: every
// index (one per request with client tools) shares them, read-only.
var defaultMaps [2]struct {
	once    sync.Once
	syn     map[string][]string
	phrases map[string][]phrase
}

func defaultSynonymMap(stemmed bool) (map[string][]string, map[string][]phrase) {
	i := 0
	if stemmed {
		i = 1
	}
	d := &defaultMaps[i]
	d.once.Do(func() {
		c := &config{stem: stemmed}
		d.syn, d.phrases = synonymMap(DefaultSynonyms(), c.term)
	})
	return d.syn, d.phrases
}

// orDefault is v, or def for zero, or 0 for a negative v.
func orDefault(v, def float64) float64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// term is the index key of a word.
func (c *config) term(w string) string {
	if c.stem {
		return stem(w)
	}
	return w
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
