// Length distributions of synthetic prompts and outputs: fixed, uniform,
// clipped normal, clipped lognormal or an empirical list, drawn from the
// plan's seed.

package capture

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
)

// Length distribution kinds (manifest workload.input_tokens.kind).
const (
	LengthFixed     = "fixed"
	LengthUniform   = "uniform"
	LengthNormal    = "normal"
	LengthLognormal = "lognormal"
	LengthEmpirical = "empirical"
)

// maxEmpiricalLengths bounds an empirical list.
const maxEmpiricalLengths = 1 << 16

// LengthSpec is a distribution of token lengths, written as
//
//	N                        fixed N
//	A..B                     uniform on the integers A to B
//	normal:MEAN,SD[,MIN,MAX] normal, rounded, clipped to [MIN, MAX]
//	lognormal:MEAN,SD[,MIN,MAX] lognormal with that mean and standard
//	                         deviation (of the lengths), rounded, clipped
//	list:L1,L2,...           each listed length with equal probability
//
// MIN defaults to 1 and MAX to MEAN + 4·SD (rounded up), so every
// distribution has a bound the records' lengths are checked against. It
// is the format of the --input-tokens and --output-tokens flags and of a
// plan's input_lengths and output_lengths.
type LengthSpec struct {
	Kind     string
	Lo, Hi   int     // fixed: Lo = Hi; uniform, normal, lognormal: the clip
	Mean, SD float64 // normal and lognormal
	List     []int   // empirical
}

// ParseLengthSpec reads a LengthSpec.
func ParseLengthSpec(s string) (LengthSpec, error) {
	bad := func(format string, args ...any) (LengthSpec, error) {
		return LengthSpec{}, fmt.Errorf("length %q: %s", s, fmt.Sprintf(format, args...))
	}
	length := func(v string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 || n > MaxSyntheticLength {
			return 0, fmt.Errorf("%q is not a whole number of tokens from 1 to %d", v, MaxSyntheticLength)
		}
		return n, nil
	}
	kind, args, ok := strings.Cut(s, ":")
	if !ok {
		if a, b, ok := strings.Cut(s, ".."); ok {
			lo, err := length(a)
			if err != nil {
				return bad("%v", err)
			}
			hi, err := length(b)
			if err != nil {
				return bad("%v", err)
			}
			if hi < lo {
				return bad("the upper end is below the lower")
			}
			return LengthSpec{Kind: LengthUniform, Lo: lo, Hi: hi}, nil
		}
		n, err := length(s)
		if err != nil {
			return bad("%v; want N, A..B, normal:MEAN,SD[,MIN,MAX], lognormal:MEAN,SD[,MIN,MAX] or list:L1,L2,...", err)
		}
		return LengthSpec{Kind: LengthFixed, Lo: n, Hi: n}, nil
	}
	parts := strings.Split(args, ",")
	switch kind {
	case "list":
		if len(parts) > maxEmpiricalLengths {
			return bad("more than %d lengths", maxEmpiricalLengths)
		}
		d := LengthSpec{Kind: LengthEmpirical}
		for _, p := range parts {
			n, err := length(p)
			if err != nil {
				return bad("%v", err)
			}
			d.List = append(d.List, n)
		}
		d.Lo, d.Hi = slices.Min(d.List), slices.Max(d.List)
		return d, nil
	case LengthNormal, LengthLognormal:
		if len(parts) != 2 && len(parts) != 4 {
			return bad("want %s:MEAN,SD or %s:MEAN,SD,MIN,MAX", kind, kind)
		}
		var f [2]float64
		for i := range f {
			v, err := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
			if err != nil || !(v >= 0 && v <= MaxSyntheticLength) {
				return bad("%q is not a number of tokens from 0 to %d", parts[i], MaxSyntheticLength)
			}
			f[i] = v
		}
		d := LengthSpec{Kind: kind, Mean: f[0], SD: f[1], Lo: 1, Hi: int(min(math.Ceil(f[0]+float64(4*f[1])), MaxSyntheticLength))}
		if len(parts) == 4 {
			var err error
			if d.Lo, err = length(parts[2]); err != nil {
				return bad("%v", err)
			}
			if d.Hi, err = length(parts[3]); err != nil {
				return bad("%v", err)
			}
		}
		if d.Mean < 1 || d.Hi < d.Lo {
			return bad("want a mean of at least 1 and MAX at least MIN")
		}
		return d, nil
	}
	return bad("unknown kind %q: want N, A..B, normal:, lognormal: or list:", kind)
}

// String writes d in the form ParseLengthSpec reads, with the defaults
// spelt out.
func (d LengthSpec) String() string {
	switch d.Kind {
	case LengthFixed:
		return strconv.Itoa(d.Lo)
	case LengthUniform:
		return fmt.Sprintf("%d..%d", d.Lo, d.Hi)
	case LengthNormal, LengthLognormal:
		return fmt.Sprintf("%s:%s,%s,%d,%d", d.Kind, digits.Shortest(d.Mean), digits.Shortest(d.SD), d.Lo, d.Hi)
	case LengthEmpirical:
		var b strings.Builder
		b.WriteString("list:")
		for i, n := range d.List {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(n))
		}
		return b.String()
	}
	return ""
}

// Fixed reports whether d is one length.
func (d LengthSpec) Fixed() bool { return d.Kind == LengthFixed }

// MarshalJSON writes d as its String.
func (d LengthSpec) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads d from a string in ParseLengthSpec's form, or a
// number (fixed).
func (d *LengthSpec) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n json.Number
		if json.Unmarshal(b, &n) != nil {
			return fmt.Errorf("length distribution: want a string such as \"64..256\" or a number")
		}
		s = n.String()
	}
	v, err := ParseLengthSpec(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// draw returns one length from d.
func (d LengthSpec) draw(rng *rand.Rand) int {
	var x float64
	switch d.Kind {
	case LengthUniform:
		return d.Lo + rng.IntN(d.Hi-d.Lo+1)
	case LengthEmpirical:
		return d.List[rng.IntN(len(d.List))]
	case LengthNormal:
		x = d.Mean + float64(d.SD*rng.NormFloat64())
	case LengthLognormal:
		// The lognormal whose mean and standard deviation are d's:
		// σ² = ln(1 + SD²/MEAN²), μ = ln MEAN − σ²/2.
		s2 := math.Log1p(d.SD * d.SD / (d.Mean * d.Mean))
		x = math.Exp(math.Log(d.Mean) - float64(s2/2) + float64(math.Sqrt(s2)*rng.NormFloat64()))
	default:
		return d.Lo
	}
	return int(min(max(math.Round(x), float64(d.Lo)), float64(d.Hi)))
}

// lengthsStream is the random stream the drawn lengths of a pool come
// from, apart from its prompts' words.
const lengthsStream = 0x6c656e67 // "leng"

// drawnItems returns n synthetic items whose input and output lengths are
// drawn from in and out (seeded: the same arguments give the same items).
func drawnItems(seed, stream uint64, n int, in, out LengthSpec) []Item {
	rng := rand.New(rand.NewPCG(seed, stream^lengthsStream))
	gen := newPromptWords(seed, stream)
	items := make([]Item, n)
	for i := range items {
		a, b := in.draw(rng), out.draw(rng)
		items[i] = Item{Prompt: gen.words(a), InputTokens: a, OutputTokens: b}
	}
	return items
}
