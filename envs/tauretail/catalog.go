package tauretail

import (
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
)

// Option is one option of a variant, e.g. {color, blue}.
type Option struct {
	Name, Value string
}

// Options are a variant's options in the product's dimension order.
type Options []Option

// Describe writes the options as the user says them: "color blue, size L".
func (o Options) Describe() string {
	var sb strings.Builder
	for i, opt := range o {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(opt.Name)
		sb.WriteByte(' ')
		sb.WriteString(opt.Value)
	}
	return sb.String()
}

func (o Options) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for _, opt := range o {
		b = appendStringField(b, opt.Name, opt.Value)
	}
	return append(b, '}')
}

// Variant is one purchasable item of a product.
type Variant struct {
	ItemID    string
	Options   Options
	Price     Money
	Available bool
}

// Product is a product type with its variants. Products are shared,
// read-only, by every episode.
type Product struct {
	Name      string
	ProductID string
	Variants  []Variant
	// HeldOut products only ever appear in orders of the unseen split.
	HeldOut bool

	detailsJSON string // get_product_details output, rendered once
}

// Variant returns the variant with the given item id.
func (p *Product) Variant(itemID string) (Variant, bool) {
	for _, v := range p.Variants {
		if v.ItemID == itemID {
			return v, true
		}
	}
	return Variant{}, false
}

// Catalog is the store's product list, identical in every episode.
type Catalog struct {
	Products  []*Product // in catalog order
	byID      map[string]*Product
	typesJSON string // list_all_product_types output
}

// Product returns the product with the given id, or nil.
func (c *Catalog) Product(productID string) *Product {
	return c.byID[productID]
}

// productSpec is a product type as written by hand: a name and its option
// dimensions. Variants are a seeded sample of the dimensions' combinations.
type productSpec struct {
	name      string
	basePrice Money
	options   []optionSpec
}

type optionSpec struct {
	name   string
	values []string
}

// heldOutEvery marks every fifth product type as held out for the unseen
// split.
const heldOutEvery = 5

var productSpecs = []productSpec{
	{"T-Shirt", 2499, []optionSpec{{"color", []string{"red", "blue", "black", "white", "green"}}, {"size", []string{"S", "M", "L", "XL"}}, {"material", []string{"cotton", "polyester"}}}},
	{"Running Shoes", 8999, []optionSpec{{"color", []string{"black", "white", "grey", "orange"}}, {"size", []string{"7", "8", "9", "10", "11"}}}},
	{"Backpack", 5499, []optionSpec{{"color", []string{"black", "navy", "olive", "grey"}}, {"capacity", []string{"20L", "30L", "40L"}}, {"material", []string{"nylon", "canvas"}}}},
	{"Water Bottle", 1999, []optionSpec{{"capacity", []string{"500ml", "750ml", "1000ml"}}, {"color", []string{"blue", "black", "white", "green"}}, {"material", []string{"stainless steel", "plastic", "glass"}}}},
	{"Desk Lamp", 3999, []optionSpec{{"color", []string{"black", "white", "silver"}}, {"brightness", []string{"low", "medium", "high"}}, {"power source", []string{"AC adapter", "USB", "battery"}}}},
	{"Wireless Earbuds", 12999, []optionSpec{{"color", []string{"black", "white", "blue"}}, {"battery life", []string{"4 hours", "6 hours", "8 hours"}}, {"water resistance", []string{"IPX4", "IPX7", "none"}}}},
	{"Office Chair", 24999, []optionSpec{{"material", []string{"mesh", "leather", "fabric"}}, {"color", []string{"black", "grey", "blue"}}, {"armrest", []string{"fixed", "adjustable"}}}},
	{"Coffee Maker", 7999, []optionSpec{{"capacity", []string{"4 cups", "8 cups", "12 cups"}}, {"type", []string{"drip", "espresso", "pour-over"}}, {"color", []string{"black", "stainless steel", "red"}}}},
	{"Yoga Mat", 2999, []optionSpec{{"thickness", []string{"4mm", "6mm", "8mm"}}, {"material", []string{"PVC", "TPE", "natural rubber"}}, {"color", []string{"purple", "blue", "pink", "black"}}}},
	{"Bluetooth Speaker", 6999, []optionSpec{{"color", []string{"black", "blue", "red"}}, {"battery life", []string{"10 hours", "20 hours"}}, {"water resistance", []string{"yes", "no"}}}},
	{"Mechanical Keyboard", 11999, []optionSpec{{"switch type", []string{"linear", "tactile", "clicky"}}, {"backlight", []string{"none", "white", "RGB"}}, {"size", []string{"full size", "80%", "60%"}}}},
	{"Smart Watch", 19999, []optionSpec{{"color", []string{"black", "silver", "gold"}}, {"band", []string{"silicone", "leather", "metal"}}, {"display", []string{"LCD", "AMOLED"}}}},
	{"Tablet", 39999, []optionSpec{{"screen size", []string{"8-inch", "10-inch", "12-inch"}}, {"storage", []string{"64GB", "128GB", "256GB"}}, {"color", []string{"black", "silver", "gold"}}}},
	{"Sunglasses", 8999, []optionSpec{{"frame color", []string{"black", "brown", "silver"}}, {"lens color", []string{"grey", "green", "brown"}}, {"lens type", []string{"polarized", "non-polarized"}}}},
	{"Jigsaw Puzzle", 2499, []optionSpec{{"pieces", []string{"500", "1000", "1500"}}, {"theme", []string{"animals", "landscapes", "art"}}, {"difficulty", []string{"beginner", "intermediate", "expert"}}}},
	{"Electric Kettle", 4499, []optionSpec{{"capacity", []string{"1L", "1.5L", "2L"}}, {"material", []string{"glass", "plastic", "stainless steel"}}, {"color", []string{"white", "black", "silver"}}}},
	{"Hiking Boots", 14999, []optionSpec{{"size", []string{"7", "8", "9", "10", "11", "12"}}, {"material", []string{"leather", "synthetic"}}, {"waterproof", []string{"yes", "no"}}}},
	{"Gaming Mouse", 5999, []optionSpec{{"color", []string{"black", "white", "RGB"}}, {"sensor type", []string{"optical", "laser"}}, {"connectivity", []string{"wired", "wireless"}}}},
	{"Vacuum Cleaner", 29999, []optionSpec{{"type", []string{"upright", "canister", "robotic"}}, {"bag type", []string{"bagged", "bagless"}}, {"features", []string{"cordless", "HEPA filter", "pet hair removal"}}}},
	{"Air Purifier", 17999, []optionSpec{{"room size", []string{"small", "medium", "large"}}, {"filter type", []string{"HEPA", "carbon", "ionic"}}, {"features", []string{"quiet operation", "smart sensors", "night mode"}}}},
	{"Skateboard", 9999, []optionSpec{{"deck material", []string{"maple", "bamboo", "plastic"}}, {"length", []string{"28 inch", "31 inch", "34 inch"}}, {"design", []string{"plain", "graphic", "custom"}}}},
	{"Notebook", 1299, []optionSpec{{"size", []string{"A5", "A4"}}, {"cover type", []string{"hard cover", "soft cover"}}, {"paper", []string{"lined", "dotted", "blank"}}}},
	{"Headphones", 15999, []optionSpec{{"type", []string{"over-ear", "on-ear"}}, {"connectivity", []string{"wired", "wireless"}}, {"color", []string{"black", "white", "red"}}}},
	{"Garden Hose", 3499, []optionSpec{{"length", []string{"25ft", "50ft", "100ft"}}, {"material", []string{"rubber", "vinyl", "latex"}}, {"color", []string{"green", "blue", "black"}}}},
	{"Digital Camera", 49999, []optionSpec{{"resolution", []string{"20MP", "24MP", "30MP"}}, {"zoom", []string{"3x", "5x", "10x"}}, {"storage", []string{"SD card", "CF card"}}}},
	{"Perfume", 7499, []optionSpec{{"scent family", []string{"fresh", "floral", "woody"}}, {"size", []string{"30ml", "50ml", "100ml"}}, {"gender", []string{"men", "women", "unisex"}}}},
	{"Bicycle", 59999, []optionSpec{{"frame size", []string{"small", "medium", "large"}}, {"color", []string{"red", "blue", "black", "green"}}, {"type", []string{"road", "mountain", "city"}}}},
	{"Wall Clock", 3999, []optionSpec{{"diameter", []string{"10 inches", "12 inches", "14 inches"}}, {"color", []string{"black", "white", "wood"}}, {"type", []string{"analog", "digital"}}}},
	{"Pet Bed", 4999, []optionSpec{{"size", []string{"small", "medium", "large"}}, {"material", []string{"memory foam", "polyester", "fleece"}}, {"color", []string{"grey", "brown", "beige"}}}},
	{"Laptop", 99999, []optionSpec{{"screen size", []string{"13-inch", "15-inch", "17-inch"}}, {"processor", []string{"i5", "i7", "i9"}}, {"ram", []string{"8GB", "16GB", "32GB"}}}},
}

var (
	catalogOnce   sync.Once
	sharedCatalog *Catalog
)

// catalog returns the shared catalog, built on first use.
func catalog() *Catalog {
	catalogOnce.Do(func() { sharedCatalog = buildCatalog() })
	return sharedCatalog
}

// buildCatalog draws every product's variants, ids, prices and availability
// from a fixed seed, so the catalog is the same in every process.
func buildCatalog() *Catalog {
	rng := rand.New(rand.NewPCG(0x7a0b, 0x5e7a11))
	ids := newIDSet()
	c := &Catalog{byID: make(map[string]*Product, len(productSpecs))}
	for i, spec := range productSpecs {
		p := &Product{
			Name:      spec.name,
			ProductID: ids.digits(rng, 10),
			HeldOut:   i%heldOutEvery == heldOutEvery-1,
		}
		combos := 1
		for _, dim := range spec.options {
			combos *= len(dim.values)
		}
		chosen := rng.Perm(combos)[:min(combos, 6+rng.IntN(7))]
		sort.Ints(chosen)
		for _, combo := range chosen {
			opts := make(Options, len(spec.options))
			rest := combo
			for d := len(spec.options) - 1; d >= 0; d-- {
				dim := spec.options[d]
				opts[d] = Option{dim.name, dim.values[rest%len(dim.values)]}
				rest /= len(dim.values)
			}
			p.Variants = append(p.Variants, Variant{
				ItemID:    ids.digits(rng, 10),
				Options:   opts,
				Price:     spec.basePrice*8/10 + Money(rng.Int64N(int64(spec.basePrice)/2)),
				Available: rng.IntN(5) != 0,
			})
		}
		// Item changes need at least two available variants to choose from.
		p.Variants[0].Available = true
		p.Variants[1].Available = true
		p.detailsJSON = string(p.appendJSON(nil))
		c.Products = append(c.Products, p)
		c.byID[p.ProductID] = p
	}
	c.typesJSON = string(c.appendTypesJSON(nil))
	return c
}

func (p *Product) appendJSON(b []byte) []byte {
	b = append(b, '{')
	b = appendStringField(b, "name", p.Name)
	b = appendStringField(b, "product_id", p.ProductID)
	b = append(appendKey(b, "variants"), '{')
	for _, v := range p.Variants {
		b = append(appendKey(b, v.ItemID), '{')
		b = appendStringField(b, "item_id", v.ItemID)
		b = v.Options.appendJSON(appendKey(b, "options"))
		b = appendKey(b, "available")
		if v.Available {
			b = append(b, "true"...)
		} else {
			b = append(b, "false"...)
		}
		b = v.Price.appendText(appendKey(b, "price"))
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

// appendTypesJSON lists product names and ids, sorted by name.
func (c *Catalog) appendTypesJSON(b []byte) []byte {
	sorted := make([]*Product, len(c.Products))
	copy(sorted, c.Products)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	b = append(b, '{')
	for _, p := range sorted {
		b = appendStringField(b, p.Name, p.ProductID)
	}
	return append(b, '}')
}

// idSet hands out random numeric ids that are unique within it.
type idSet map[string]bool

func newIDSet() idSet { return make(idSet, 64) }

// digits returns a fresh id of n (at most 16) decimal digits with no
// leading zero.
func (s idSet) digits(rng *rand.Rand, n int) string {
	var b [16]byte
	for {
		b[0] = byte('1' + rng.IntN(9))
		for i := 1; i < n; i++ {
			b[i] = byte('0' + rng.IntN(10))
		}
		id := string(b[:n])
		if !s[id] {
			s[id] = true
			return id
		}
	}
}
