package httpapi

import (
	"encoding/json"
	"net/http"
)

// streamResponse writes a JSON array whose items are produced while it is written, so a bulk read holds
// one chunk at a time. The first chunk is produced before the status is written (so errors in the
// request are proper error responses); a failure after that aborts the connection rather than send a
// well-formed but truncated array.
type streamResponse struct {
	first []any
	// cont is Service-Continue (only when the client paged with limit).
	cont string
	// rest produces the remaining items, chunk by chunk; nil when there are none.
	rest func(emit func([]any) error) error
}

func (r streamResponse) write(w http.ResponseWriter) error {
	if r.cont != "" {
		w.Header().Set("Service-Continue", r.cont)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	n := 0
	emit := func(items []any) error {
		for _, it := range items {
			data, err := json.Marshal(it)
			if err != nil {
				return err
			}
			sep := []byte{','}
			if n == 0 {
				sep = []byte{'['}
			}
			n++
			if _, err := w.Write(append(sep, data...)); err != nil {
				return err
			}
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		return nil
	}
	if err := emit(r.first); err != nil {
		return err
	}
	if r.rest != nil {
		if err := r.rest(emit); err != nil {
			panic(http.ErrAbortHandler)
		}
	}
	if n == 0 {
		_, err := w.Write([]byte("[]\n"))
		return err
	}
	_, err := w.Write([]byte("]\n"))
	return err
}

// stream runs a pager: the first page now, the rest while the response is written.
func stream[T any](next func() ([]T, string, bool, error), convert func([]T) ([]any, error)) (streamResponse, error) {
	items, cont, ok, err := next()
	if err != nil {
		return streamResponse{}, err
	}
	first, err := convert(items)
	if err != nil {
		return streamResponse{}, err
	}
	res := streamResponse{first: first, cont: cont}
	if ok {
		res.rest = func(emit func([]any) error) error {
			for {
				items, _, ok, err := next()
				if err != nil {
					return err
				}
				if !ok {
					return nil
				}
				out, err := convert(items)
				if err != nil {
					return err
				}
				if err := emit(out); err != nil {
					return err
				}
			}
		}
	}
	return res, nil
}
