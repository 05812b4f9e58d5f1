package masking_test

import (
	"fmt"

	"github.com/maskgate/maskgate/masking"
)

func Example() {
	// A toy byte-level vocabulary: every byte, a few merges, and the
	// trigger and end as special tokens.
	var pieces [][]byte
	for b := range 256 {
		pieces = append(pieces, []byte{byte(b)})
	}
	for _, p := range []string{"get", "_file", "_files", "\n{\"name\": \"", "\", \"arguments\": ", "{}}\n"} {
		pieces = append(pieces, []byte(p))
	}
	trigger, end := len(pieces), len(pieces)+1
	pieces = append(pieces, []byte("<tool_call>"), []byte("</tool_call>"))
	ix, err := masking.NewIndex(masking.SliceVocab{Pieces: pieces, Special: map[int]bool{trigger: true, end: true}})
	if err != nil {
		panic(err)
	}

	var cache masking.Cache
	m, err := cache.Get(ix, masking.Spec{Format: masking.Hermes(), Allowed: []string{"get_file"}})
	if err != nil {
		panic(err)
	}
	st := m.NewState()
	fmt.Println("free text unconstrained:", st.Allowed().All())
	for _, tok := range []int{trigger, 259, 256} { // <tool_call>, \n{"name": ", get
		if err := st.Accept(tok); err != nil {
			panic(err)
		}
	}
	fmt.Println("_file allowed:", st.Allowed().Has(257), "_files allowed:", st.Allowed().Has(258))
	fmt.Println(st.Accept(258))
	// Output:
	// free text unconstrained: true
	// _file allowed: true _files allowed: false
	// masking: token 258 ("_files") in phase name: token not allowed
}
