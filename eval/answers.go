package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/retrieval"
)

// Judge answers questions with the grounded model and judges each answer with the FHNW prototype's rule: an answer is
// correct if it contains the reference fact.
type Judge struct {
	Client openai.Client
	// Model answers and judges; default gpt-4o-mini.
	Model string
	// SiteName names the site in the grounding prompt.
	SiteName string
}

// Answers are answer-correctness figures.
type Answers struct {
	Model    string        `json:"model"`
	Repeats  int           `json:"repeats"`
	Total    int           `json:"total"`
	Correct  int           `json:"correct"`
	Accuracy float64       `json:"accuracy"`
	Wrong    []WrongAnswer `json:"wrong,omitempty"`
}

// WrongAnswer is a question not answered correctly every time.
type WrongAnswer struct {
	ID       string `json:"id"`
	Question string `json:"question"`
	Correct  int    `json:"correct"`
	Example  string `json:"example"`
}

// JudgePrompt is the judging instruction (the FHNW prototype: correct if the answer contains the reference fact).
const JudgePrompt = `You grade answers. Reply with JSON {"correct": true} if the answer contains the reference ` +
	`fact (the same information; wording and formatting may differ), otherwise {"correct": false}.`

// Answers answers every question repeats times and judges each answer.
func (j *Judge) Answers(ctx context.Context, r *retrieval.Retriever, an retrieval.Analyzer, qs []Question, repeats int) (*Answers, error) {
	if repeats < 1 {
		repeats = 1
	}
	model := j.Model
	if model == "" {
		model = "gpt-4o-mini"
	}
	out := &Answers{Model: model, Repeats: repeats}
	for _, q := range qs {
		a, err := an.Analyze(ctx, q.Messages())
		if err != nil {
			return nil, fmt.Errorf("answers %s: %w", q.ID, err)
		}
		res, err := r.RetrieveFor(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("answers %s: %w", q.ID, err)
		}
		correct, example := 0, ""
		for i := 0; i < repeats; i++ {
			ans, err := j.complete(ctx, model, grounding.SystemPrompt(j.SiteName, res), append(slices.Clone(q.Before), q.Question), nil)
			if err != nil {
				return nil, fmt.Errorf("answers %s: %w", q.ID, err)
			}
			ok, err := j.judge(ctx, model, q, ans)
			if err != nil {
				return nil, fmt.Errorf("answers %s: judge: %w", q.ID, err)
			}
			if ok {
				correct++
			} else {
				example = ans
			}
		}
		out.Total += repeats
		out.Correct += correct
		if correct < repeats {
			out.Wrong = append(out.Wrong, WrongAnswer{ID: q.ID, Question: q.Question, Correct: correct, Example: example})
		}
	}
	if out.Total > 0 {
		out.Accuracy = float64(out.Correct) / float64(out.Total)
	}
	return out, nil
}

func (j *Judge) judge(ctx context.Context, model string, q Question, answer string) (bool, error) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"correct": map[string]any{"type": "boolean"}},
		"required": []string{"correct"}, "additionalProperties": false}
	user := fmt.Sprintf("Question: %s\nReference fact: %s\nAnswer:\n%s", q.Question, q.Fact, answer)
	text, err := j.complete(ctx, model, JudgePrompt, []string{user}, &openai.ChatCompletionNewParamsResponseFormatUnion{
		OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
			Name: "grade", Strict: openai.Bool(true), Schema: schema}},
	})
	if err != nil {
		return false, err
	}
	var v struct {
		Correct *bool `json:"correct"`
	}
	if err := json.Unmarshal([]byte(text), &v); err != nil || v.Correct == nil {
		return false, fmt.Errorf("unreadable grade %q", text)
	}
	return *v.Correct, nil
}

func (j *Judge) complete(ctx context.Context, model, system string, users []string, format *openai.ChatCompletionNewParamsResponseFormatUnion) (string, error) {
	p := openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(system)}}
	for _, u := range users {
		p.Messages = append(p.Messages, openai.UserMessage(u))
	}
	if format != nil {
		p.ResponseFormat = *format
		p.Temperature = openai.Float(0)
	}
	resp, err := j.Client.Chat.Completions.New(ctx, p)
	if err != nil {
		return "", err
	}
	if len(resp.Choices) == 0 {
		return "", errors.New("no choices")
	}
	return resp.Choices[0].Message.Content, nil
}
