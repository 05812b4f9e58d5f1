package toolsearch

// isStopWord reports whether a lowercase word carries no meaning for finding a tool. The
// list is short on purpose: function words, pronouns, politeness, the pieces of
// contractions that the tokenizer leaves ("don't" → "don", "t"), and the words that
// introduce a name or a quote in a task ("a folder called backups", "reply saying yes"),
// whose stems would otherwise match tools ("called" → call). Verbs such as "get", "list"
// and "new" are not stop words: they pick the operation.
func isStopWord(w string) bool {
	switch w {
	case "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at",
		"be", "been", "being", "but", "by",
		"called", "can", "could",
		"d", "did", "do", "does", "doing", "don",
		"each", "every",
		"for", "from",
		"had", "has", "have", "he", "her", "here", "him", "his", "how",
		"i", "if", "in", "into", "is", "it", "its",
		"just",
		"let", "lets", "like", "ll",
		"m", "me", "might", "more", "most", "must", "my",
		"named", "need", "needs", "no", "nor", "not",
		"of", "on", "one", "only", "onto", "or", "other", "our", "ours", "own",
		"please",
		"re",
		"s", "same", "saying", "says", "she", "should", "so", "some", "such",
		"t", "than", "that", "the", "their", "them", "then", "there", "these", "they",
		"this", "those", "to", "too",
		"up", "us", "using", "use",
		"ve", "very", "via",
		"want", "wants", "was", "we", "were", "what", "when", "where", "which", "while",
		"who", "whom", "why", "will", "with", "would",
		"you", "your", "yours":
		return true
	}
	return false
}
