package insights

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ragproxy/ragproxy/server"
)

// Metrics counts what the question log sees; observability.Metrics implements it.
type Metrics interface {
	// Answer counts an answered question by its outcome.
	Answer(outcome string)
	// Feedback counts a rating.
	Feedback(rating string)
	// QuestionsDropped counts questions the log could not keep, by reason: DroppedFull or DroppedStore.
	QuestionsDropped(reason string, n int)
}

// The reasons of Metrics.QuestionsDropped.
const (
	// DroppedFull: the log's buffer was full (the store is slower than the questions come).
	DroppedFull = "buffer_full"
	// DroppedStore: the store failed to write them.
	DroppedStore = "store_error"
)

// Price is a model's price in US dollars per million tokens.
type Price struct{ Input, Output float64 }

// LogConfig configures a Log.
type LogConfig struct {
	// Store receives the questions; required unless Mode is Off.
	Store QuestionWriter
	// Mode says what is kept of each question; default Redacted. With Off nothing is written, and questions are
	// only counted.
	Mode Mode
	// Buffer is how many questions wait for the writer at most; more are dropped and counted. Default 8192.
	Buffer int
	// Batch is the most questions written in one transaction; default 512. FlushInterval is the longest a
	// question waits for its batch; default 200ms.
	Batch         int
	FlushInterval time.Duration
	// Price estimates the cost of an answer a model wrote (per million prompt and completion tokens); answers
	// written without an upstream call (the FAQ, offline answers, replays from the response cache) cost nothing.
	// Default zero: no cost.
	Price Price
	// Metrics, when set, counts answers by outcome and dropped questions.
	Metrics Metrics
	// Logger reports a store that fails (once until it works again). Default: discard.
	Logger *slog.Logger
}

// item is a question on its way to the writer, or a flush request (done set).
type item struct {
	q    server.Question
	done chan struct{}
}

// Log is the question log: server.QuestionLog's implementation. LogQuestion hands each question to a buffer
// and returns at once; Run writes the buffer to the store in batches, off the requests' path. A store that
// fails loses those questions (counted, logged once until it works again) and never an answer.
type Log struct {
	cfg   LogConfig
	queue chan item
	// full and down report that a dropped question or a failed write was logged and not yet followed by a
	// successful write.
	full, down atomic.Bool
}

var _ server.QuestionLog = (*Log)(nil)

// NewLog returns a question log; call Run to write what it receives.
func NewLog(cfg LogConfig) *Log {
	if cfg.Buffer <= 0 {
		cfg.Buffer = 8192
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 512
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 200 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Log{cfg: cfg, queue: make(chan item, cfg.Buffer)}
}

// LogQuestion implements server.QuestionLog: it never blocks; a question that finds the buffer full is dropped
// and counted.
func (l *Log) LogQuestion(_ context.Context, q server.Question) {
	if l.cfg.Mode == Off {
		if l.cfg.Metrics != nil {
			l.cfg.Metrics.Answer(outcome(q))
		}
		return
	}
	select {
	case l.queue <- item{q: q}:
	default:
		if l.cfg.Metrics != nil {
			l.cfg.Metrics.QuestionsDropped(DroppedFull, 1)
		}
		if !l.full.Swap(true) {
			l.cfg.Logger.Warn("question log: buffer full, questions dropped until the store catches up", "buffer", l.cfg.Buffer)
		}
	}
}

// Flush waits until every question handed to the log before it was written (or failed to be), or ctx ends.
func (l *Log) Flush(ctx context.Context) error {
	if l.cfg.Mode == Off {
		return nil
	}
	done := make(chan struct{})
	select {
	case l.queue <- item{done: done}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// writeTimeout bounds one batch's write, so a store that hangs costs questions, not the writer.
const writeTimeout = 10 * time.Second

// Run writes the questions handed to the log until ctx ends, then writes those still buffered and returns.
func (l *Log) Run(ctx context.Context) error {
	if l.cfg.Mode == Off {
		<-ctx.Done()
		return nil
	}
	batch := make([]Question, 0, l.cfg.Batch)
	var waiting []chan struct{}
	tick := time.NewTicker(l.cfg.FlushInterval)
	defer tick.Stop()
	flush := func(ctx context.Context) {
		if len(batch) > 0 {
			l.write(ctx, batch)
			batch = batch[:0]
		}
		for _, w := range waiting {
			close(w)
		}
		waiting = waiting[:0]
	}
	add := func(it item) {
		if it.done != nil {
			waiting = append(waiting, it.done)
			return
		}
		batch = append(batch, l.question(it.q))
	}
	for {
		select {
		case it := <-l.queue:
			add(it)
			// Take what else is waiting, up to a batch, so a busy log writes full batches.
			for len(batch) < l.cfg.Batch && len(waiting) == 0 {
				select {
				case it := <-l.queue:
					add(it)
					continue
				default:
				}
				break
			}
			if len(batch) >= l.cfg.Batch || len(waiting) > 0 {
				flush(ctx)
			}
		case <-tick.C:
			flush(ctx)
		case <-ctx.Done():
			// The server has stopped answering: write what is left, on a context of its own since ctx ended.
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
			defer cancel()
			for {
				select {
				case it := <-l.queue:
					add(it)
					if len(batch) >= l.cfg.Batch {
						flush(final)
					}
					continue
				default:
				}
				break
			}
			flush(final)
			return nil
		}
	}
}

// write stores one batch; a failure is counted, and logged when the store was working until then.
func (l *Log) write(ctx context.Context, batch []Question) {
	wctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	err := l.cfg.Store.AddQuestions(wctx, batch)
	if err != nil {
		if l.cfg.Metrics != nil {
			l.cfg.Metrics.QuestionsDropped(DroppedStore, len(batch))
		}
		if !l.down.Swap(true) && !errors.Is(err, context.Canceled) {
			l.cfg.Logger.Error("question log: the store failed; questions are dropped until it works again (answers go on)", "err", err)
		}
		return
	}
	if l.down.Swap(false) {
		l.cfg.Logger.Info("question log: the store works again")
	}
	l.full.Store(false)
}

// question turns what the gateway reported into what is stored, redacted as the mode says.
func (l *Log) question(sq server.Question) Question {
	o := outcome(sq)
	if l.cfg.Metrics != nil {
		l.cfg.Metrics.Answer(o)
	}
	q := Question{At: sq.At, Model: sq.Model, Question: sq.Question, Standalone: sq.Standalone, Outcome: o,
		Confidence: sq.Confidence, Pages: sq.Cited, Topic: sq.Topic, Latency: sq.Latency,
		PromptTokens: sq.Usage.PromptTokens, CompletionTokens: sq.Usage.CompletionTokens, ResponseID: sq.ResponseID, Key: sq.Key}
	if sq.Upstream {
		q.Cost = (float64(q.PromptTokens)*l.cfg.Price.Input + float64(q.CompletionTokens)*l.cfg.Price.Output) / 1e6
	}
	if l.cfg.Mode == Redacted {
		q.Question, q.Standalone = Redact(q.Question), Redact(q.Standalone)
	}
	return q
}

// outcome is a question's outcome: the Grounder's, except that an answer grounded in the site's pages which
// says it does not know is unanswered.
func outcome(q server.Question) string {
	if q.Outcome == server.OutcomeAnswered && SaysDontKnow(q.Answer) {
		return Unanswered
	}
	return q.Outcome
}

// dontKnow are the openings with which answers admit the site does not say: the grounding prompt asks the model
// to say it does not know, the offline answer opens with "I don't know", and one that offers the closest
// passages with "No passage answers this directly"; in each language ragproxy speaks, as the model answers in the
// visitor's language and ragproxy's own texts follow it (its lines as they are and, for the answers logged
// before they were shortened, as they were), and the model's "I don't know" in the other languages ragproxy
// analyses, whose visitors it asks the model to answer in their language.
var dontKnow = []string{"i don't know", "i do not know", "i don’t know", "i couldn't find", "i could not find",
	"i couldn’t find", "the context does not", "the provided context does not", "i'm not sure", "i’m not sure",
	"i am not sure", "there is no information", "i don't have information", "i do not have information",
	"no passage answers this directly",
	"ich weiß es nicht", "ich weiss es nicht", "keine stelle beantwortet das direkt", "keine direkte antwort", // German
	"je ne sais pas", "aucun passage n'y répond", "pas de réponse directe", // French
	"no lo sé", "ningún pasaje responde", "ninguna respuesta directa", // Spanish
	"non lo so", "nessun passaggio risponde", "nessuna risposta diretta", // Italian
	"não sei", "nenhum trecho responde", "nenhuma resposta direta", // Portuguese
	"я не знаю", "не знаю:", "прямого ответа нет", // Russian
	"わかりません", "分かりません", "直接答えている箇所はありません", // Japanese
	"我不知道", "没有直接回答的段落", // Chinese
	"no ho sé", "res no hi respon directament", // Catalan
	"saya tidak tahu", "tidak ada jawaban langsung", // Indonesian
	"ik weet het niet", "ik weet niet", "geen direct antwoord", // Dutch
	"jag vet inte", "inget direkt svar", // Swedish
	"jeg vet ikke", "jeg veit ikkje", "ingen direkte svar", // Norwegian
	"jeg ved det ikke", "jeg ved ikke", "intet direkte svar", // Danish
	"nie wiem", "brak bezpośredniej odpowiedzi", // Polish
	"لا أعرف", "لا أعلم", "لا يوجد مقطع يجيب عن هذا مباشرة", // Arabic
	"نمی‌دانم", "نمیدانم", "نمی دانم", "هیچ بخشی مستقیماً به این پاسخ نمی‌دهد", // Persian
	// Languages ragproxy has no texts in, in which a model still answers a visitor who writes them.
	"en tiedä",                // Finnish
	"bilmiyorum",              // Turkish
	"nevím",                   // Czech
	"δεν ξέρω", "δεν γνωρίζω", // Greek
}

// SaysDontKnow reports whether an answer's first sentence says it does not know.
func SaysDontKnow(answer string) bool {
	first := answer
	if len(first) > 240 {
		first = first[:240]
	}
	if i := strings.IndexAny(first, ".!?\n"); i > 0 {
		first = first[:i]
	}
	first = strings.ToLower(strings.TrimLeft(first, " *_#>\t"))
	for _, p := range dontKnow {
		if strings.Contains(first, p) {
			return true
		}
	}
	return false
}
