package capture

// The hot path's chunk parser: a hand-written scan of one stream chunk's
// JSON for the fields ParseChunk reads, without encoding/json, reflection or
// allocation. It handles the shapes servers send on success (object,
// choices with text/delta/message/finish_reason, usage, a null error) and
// gives up (ok false) on anything else: in-band errors, "object":"error",
// duplicate or case-folded keys, wrong types, numbers it does not read
// exactly. ParseChunk then decodes the chunk with encoding/json, so the
// fast path never decides a case differently; FuzzFastChunk checks that.

// fastMaxDepth bounds the nesting the fast path skips through; deeper
// chunks go to encoding/json (whose own limit is 10,000).
const fastMaxDepth = 64

// chunkScan is the fast parser's state: the data, a read position and
// whether the last string literal read held an escape.
type chunkScan struct {
	b   []byte
	i   int
	esc bool
}

// fastChunk classifies data, a whole JSON chunk already trimmed of white
// space, as ParseChunk would. ok is false when it cannot tell.
func fastChunk(data []byte) (c Chunk, usage Usage, hasUsage, ok bool) {
	s := chunkScan{b: data}
	var seen uint8
	const (
		kObject = 1 << iota
		kChoices
		kUsage
		kError
		kMessage
		kErrorType
		kTimings
	)
	ok = s.object(func(key []byte) bool {
		var bit uint8
		switch string(key) {
		case "object":
			bit = kObject
			// "error" (even spelt with escapes) is an in-band error.
			v, isNull, ok := s.str()
			if !ok || (!isNull && (string(v) == `"error"` || s.esc)) {
				return false
			}
		case "message":
			bit = kMessage
			if _, _, ok := s.str(); !ok {
				return false
			}
		case "error_type":
			bit = kErrorType
			if _, _, ok := s.str(); !ok {
				return false
			}
		case "error":
			bit = kError
			if !s.literal("null") {
				return false
			}
		case "usage":
			bit = kUsage
			if s.literal("null") {
				hasUsage = false
				break
			}
			if !s.usage(&usage) {
				return false
			}
			hasUsage = true
		case "choices":
			bit = kChoices
			if !s.choices(&c) {
				return false
			}
		case "timings":
			// llama.cpp's last chunk: kept raw for parseTimings, which
			// reads it as decodeChunk does.
			bit = kTimings
			s.ws()
			start := s.i
			if !s.skip(1) {
				return false
			}
			c.timingsRaw = s.b[start:s.i]
		default:
			return plainKey(key) && s.skip(1)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
	if !ok {
		return c, usage, false, false
	}
	s.ws()
	if s.i != len(s.b) {
		return c, usage, false, false
	}
	return c, usage, hasUsage, true
}

// plainKey reports whether an unknown key cannot match a known field under
// encoding/json's case-insensitive matching: lower-case ASCII only.
func plainKey(k []byte) bool {
	for _, c := range k {
		if c >= 0x80 || ('A' <= c && c <= 'Z') || c == '\\' {
			return false
		}
	}
	return true
}

func (s *chunkScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips white space and then c, reporting whether c was there.
func (s *chunkScan) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads an object key and the colon after it. Keys with escapes are
// refused (encoding/json would unescape them before matching).
func (s *chunkScan) key() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	lit, ok := s.stringLit()
	if !ok {
		return nil, false
	}
	k := lit[1 : len(lit)-1]
	if s.esc || !s.consume(':') {
		return nil, false
	}
	return k, true
}

// stringLit reads a JSON string at s.i (which is '"') and returns it with
// its quotes; s.esc says whether it held an escape. Escapes are checked,
// not decoded: a literal longer than "" always decodes to a non-empty
// string. Plain bytes are passed by a table lookup on local copies of the
// position and slice (chunk strings are short: a call to bytes.IndexByte
// per string costs more than it saves).
func (s *chunkScan) stringLit() ([]byte, bool) {
	b, start := s.b, s.i
	i := start + 1
	s.esc = false
	for {
		for i < len(b) && !strSpecial[b[i]] {
			i++
		}
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case '"':
			s.i = i + 1
			return b[start:s.i], true
		case '\\':
		default:
			return nil, false // a control character
		}
		s.esc = true
		if i+1 >= len(b) {
			return nil, false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(b) {
				return nil, false
			}
			for _, h := range b[i+2 : i+6] {
				if !isHex(h) {
					return nil, false
				}
			}
			i += 6
		default:
			return nil, false
		}
	}
}

// strSpecial marks the bytes that end a run of plain string bytes: the
// quote, the backslash and the control characters JSON forbids unescaped.
var strSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// str reads a string or null value: the literal with quotes, or isNull.
func (s *chunkScan) str() (lit []byte, isNull, ok bool) {
	s.ws()
	if s.literal("null") {
		return nil, true, true
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	lit, ok = s.stringLit()
	return lit, false, ok
}

// nonEmptyStr reads a string or null value and reports whether it is a
// non-empty string.
func (s *chunkScan) nonEmptyStr() (nonEmpty, ok bool) {
	lit, isNull, ok := s.str()
	return ok && !isNull && len(lit) > 2, ok
}

// literal skips white space and lit (null, true, false) when it is next.
func (s *chunkScan) literal(lit string) bool {
	s.ws()
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		end := s.i + len(lit)
		if end < len(s.b) && !isDelim(s.b[end]) {
			return false
		}
		s.i = end
		return true
	}
	return false
}

func isDelim(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

// int64Value reads an integer JSON number of at most 18 digits (so it
// cannot overflow); fractions, exponents and longer numbers are refused.
func (s *chunkScan) int64Value() (int64, bool) {
	s.ws()
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	start := s.i
	var v int64
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		v = v*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	n := s.i - start
	if n == 0 || n > 18 || (n > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) && !isDelim(s.b[s.i]) {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// object walks the members of an object, calling member for each key with
// the position at its value; member reads the value. Duplicate known keys
// are refused by the callers' seen sets.
func (s *chunkScan) object(member func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		key, ok := s.key()
		if !ok || !member(key) {
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// usage reads a usage object into u.
func (s *chunkScan) usage(u *Usage) bool {
	var seen uint8
	return s.object(func(key []byte) bool {
		var bit uint8
		var dst *int64
		switch string(key) {
		case "prompt_tokens":
			bit, dst = 1, &u.PromptTokens
		case "completion_tokens":
			bit, dst = 2, &u.CompletionTokens
		case "prompt_tokens_details":
			bit = 4
			if seen&bit != 0 {
				return false
			}
			seen |= bit
			return s.details(u)
		default:
			return plainKey(key) && s.skip(2)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if s.literal("null") {
			return true // encoding/json leaves the field as it was
		}
		v, ok := s.int64Value()
		*dst = v
		return ok
	})
}

// details reads usage.prompt_tokens_details: null, or an object whose
// cached_tokens is an integer or null (other members skipped). Any other
// shape is left to encoding/json (cachedTokens).
func (s *chunkScan) details(u *Usage) bool {
	u.CachedTokens, u.HasCached = 0, false
	if s.literal("null") {
		return true
	}
	seen := false
	return s.object(func(key []byte) bool {
		if string(key) != "cached_tokens" {
			return plainKey(key) && s.skip(3)
		}
		if seen {
			return false
		}
		seen = true
		if s.literal("null") {
			return true
		}
		v, ok := s.int64Value()
		u.CachedTokens, u.HasCached = v, ok
		return ok
	})
}

// choices reads the choices array (or null) into c.
func (s *chunkScan) choices(c *Chunk) bool {
	if s.literal("null") {
		return true
	}
	return s.array(func() bool { return s.choice(c) })
}

// array walks the elements of an array, calling elem at each.
func (s *chunkScan) array(elem func() bool) bool {
	if !s.consume('[') {
		return false
	}
	if s.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if s.consume(']') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// choice reads one element of choices.
func (s *chunkScan) choice(c *Chunk) bool {
	var seen uint8
	s.ws()
	if s.literal("null") {
		return true
	}
	return s.object(func(key []byte) bool {
		var bit uint8
		switch string(key) {
		case "text":
			bit = 1
			ne, ok := s.nonEmptyStr()
			if !ok {
				return false
			}
			c.Content = c.Content || ne
		case "finish_reason":
			bit = 2
			ne, ok := s.nonEmptyStr()
			if !ok {
				return false
			}
			c.Finish = c.Finish || ne
		case "delta":
			bit = 4
			if !s.delta(c, true) {
				return false
			}
		case "message":
			bit = 8
			if !s.delta(c, false) {
				return false
			}
		default:
			return plainKey(key) && s.skip(3)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

// delta reads a choice's delta (tools: tool_calls counted) or message.
func (s *chunkScan) delta(c *Chunk, tools bool) bool {
	if s.literal("null") {
		return true
	}
	var seen uint8
	return s.object(func(key []byte) bool {
		var bit uint8
		switch string(key) {
		case "content":
			bit = 1
		case "reasoning_content":
			bit = 2
		case "reasoning":
			bit = 4
		case "tool_calls":
			if !tools {
				return plainKey(key) && s.skip(4)
			}
			bit = 8
		default:
			return plainKey(key) && s.skip(4)
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if bit == 8 {
			s.ws()
			start := s.i
			if !s.skip(4) {
				return false
			}
			c.Content = c.Content || hasToolCalls(s.b[start:s.i])
			return true
		}
		ne, ok := s.nonEmptyStr()
		c.Content = c.Content || ne
		return ok
	})
}

// skip passes over any JSON value, checking its syntax.
func (s *chunkScan) skip(depth int) bool {
	if depth > fastMaxDepth {
		return false
	}
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, ok := s.stringLit()
		return ok
	case c == '{':
		return s.object(func([]byte) bool { return s.skip(depth + 1) })
	case c == '[':
		return s.array(func() bool { return s.skip(depth + 1) })
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	}
	return false
}

// number passes over a JSON number, checking its grammar.
func (s *chunkScan) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return false
		}
	}
	if i < len(b) && !isDelim(b[i]) {
		return false
	}
	s.i = i
	return true
}
