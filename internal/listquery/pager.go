package listquery

// chunk is how many entities a streamed read fetches at a time: memory stays bounded whatever matches.
const chunk = 200

// Pager walks a list in pages. With the client's limit it yields that one page (whose Continue the
// client follows); without, it follows continue tokens itself, chunk by chunk, so a bulk read streams
// every match without holding them all.
type Pager[T any] struct {
	params  Params
	fetch   func(Params) (Page[T], error)
	limited bool
	done    bool
}

// NewPager pages through fetch, which lists with the given parameters.
func NewPager[T any](params Params, fetch func(Params) (Page[T], error)) *Pager[T] {
	p := &Pager[T]{params: params, fetch: fetch, limited: params.Limit != nil}
	if !p.limited {
		n := chunk
		p.params.Limit = &n
	}
	return p
}

// Next returns the next page; ok is false when the list is exhausted. A limited pager's page carries the
// client's Continue; an unlimited one consumes the tokens itself and returns pages without them.
func (p *Pager[T]) Next() (page Page[T], ok bool, err error) {
	if p.done {
		return Page[T]{}, false, nil
	}
	page, err = p.fetch(p.params)
	if err != nil {
		return page, false, err
	}
	if p.limited || page.Continue == "" {
		p.done = true
		return page, true, nil
	}
	p.params.Continue = page.Continue
	page.Continue = ""
	return page, true, nil
}
