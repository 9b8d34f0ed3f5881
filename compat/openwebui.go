package compat

import (
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// SetOpenWebUISources gives a completion the top-level "sources" array that Open WebUI's chat reads the
// citations of a non-stream answer from: the data of each Open WebUI source event in events (frames
// {"event":{"type":"source","data":D}}), [D, ...], the shape its citation components show. Open WebUI owns the
// name, so only a request from Open WebUI may get it. Without source events raw is returned as it is.
func SetOpenWebUISources(raw []byte, events []json.RawMessage) ([]byte, error) {
	var data []json.RawMessage
	for _, e := range events {
		r := gjson.GetManyBytes(e, "event.type", "event.data")
		if r[0].String() == "source" && r[1].IsObject() {
			data = append(data, json.RawMessage(r[1].Raw))
		}
	}
	if len(data) == 0 {
		return raw, nil
	}
	b, err := Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("set sources: %w", err)
	}
	return sjson.SetRawBytes(raw, "sources", b)
}
