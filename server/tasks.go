package server

import (
	"net/http"
	"strings"

	"github.com/ragproxy/ragproxy/compat"
)

// Task kinds: what a chat request is when it is not a user's question. A client's background tasks carry Open
// WebUI's own task names (the TASKS enum of open_webui/constants.py), which other clients' tasks map onto.
const (
	TaskTitle        = "title_generation"
	TaskTags         = "tags_generation"
	TaskFollowUps    = "follow_up_generation"
	TaskQueries      = "query_generation"
	TaskAutocomplete = "autocomplete_generation"
	TaskImagePrompt  = "image_prompt_generation"
	TaskEmoji        = "emoji_generation"
	TaskTools        = "function_calling"
	TaskMerge        = "moa_response_generation"
	// TaskOther is a task prompt of a kind not listed above.
	TaskOther = "task"
	// TaskBypass is a request that asked for no retrieval (X-Ragproxy-Retrieval: off).
	TaskBypass = "bypass"
)

// taskPromptHeading opens every task prompt of Open WebUI's default templates ("### Task:" and, on the next line,
// what to do). Its operators may rewrite the templates; they keep the heading.
const taskPromptHeading = "### task:"

// taskRule is how one kind of task is recognised.
type taskRule struct {
	kind string
	// keyword names the task in the first line after a "### Task:" heading.
	keyword string
	// openings are how prompts without that heading start, lowercase.
	openings []string
}

// taskRules is the one table of task kinds. The openings are published prompt texts:
//   - LibreChat titles a conversation with "Provide a concise, 5-word-or-less title for the conversation..."
//     (its agents' default title method; the 0.7 versions asked "Please generate a concise, 5-word-or-less title
//     for the conversation..."), and with "Analyze this conversation and provide:" (language and title) in its
//     structured title methods.
//   - Open WebUI's emoji, tool-selection and merge prompts have no "### Task:" heading.
var taskRules = []taskRule{
	{kind: TaskTitle, keyword: "title", openings: []string{
		"provide a concise, 5-word-or-less title for the conversation",
		"please generate a concise, 5-word-or-less title for the conversation",
		"analyze this conversation and provide:",
	}},
	{kind: TaskTags, keyword: "tags"},
	{kind: TaskFollowUps, keyword: "follow-up"},
	{kind: TaskQueries, keyword: "queries"},
	{kind: TaskAutocomplete, keyword: "autocompletion"},
	{kind: TaskImagePrompt, keyword: "image generation"},
	{kind: TaskEmoji, keyword: "emoji", openings: []string{"your task is to reflect the speaker's likely facial expression"}},
	{kind: TaskTools, openings: []string{"available tools:"}},
	{kind: TaskMerge, openings: []string{"you have been provided with a set of responses from various models"}},
}

// Tasks returns the task kinds TaskKind names a client's background task by, the task label of the metrics
// (TaskOther is counted as other, and TaskBypass as an ordinary request).
func Tasks() []string {
	kinds := make([]string, len(taskRules))
	for i, r := range taskRules {
		kinds[i] = r.kind
	}
	return kinds
}

// TaskKind classifies a chat request once, from its headers and its whole conversation: "" for a user's question,
// TaskBypass for X-Ragproxy-Retrieval: off, else the kind of a client's background task. An X-OpenWebUI-Task
// header counts only when it names one of Open WebUI's tasks: versions of Open WebUI without header templating
// send a configured "{{TASK}}" literally, and current ones send "" with ordinary chats, so anything else falls
// back to the prompts. A prompt is a task when a system, developer or user message starts like one.
func TaskKind(h http.Header, msgs []compat.Message) string {
	if strings.EqualFold(strings.TrimSpace(h.Get("X-Ragproxy-Retrieval")), "off") {
		return TaskBypass
	}
	if name := strings.ToLower(strings.TrimSpace(h.Get("X-OpenWebUI-Task"))); name != "" {
		for _, r := range taskRules {
			if r.kind == name {
				return r.kind
			}
		}
	}
	for _, m := range msgs {
		if m.Role != "user" && m.Role != "system" && m.Role != "developer" {
			continue
		}
		if kind := promptTask(m.Text()); kind != "" {
			return kind
		}
	}
	return ""
}

// promptHead is the start of a message, lowercase, where task prompts are recognised.
func promptHead(text string) string {
	text = strings.TrimSpace(text)
	return strings.ToLower(text[:min(len(text), 200)])
}

// promptTask returns the task kind of a message that is a task prompt, "" for any other message.
func promptTask(text string) string { return promptTaskOf(promptHead(text)) }

// promptTaskOf is promptTask of a message's promptHead.
func promptTaskOf(head string) string {
	if rest, ok := strings.CutPrefix(head, taskPromptHeading); ok {
		line, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
		for _, r := range taskRules {
			if r.keyword != "" && strings.Contains(line, r.keyword) {
				return r.kind
			}
		}
		return TaskOther
	}
	for _, r := range taskRules {
		for _, o := range r.openings {
			if strings.HasPrefix(head, o) {
				return r.kind
			}
		}
	}
	return ""
}

// classifyPrompts reads each message as a task prompt or not, for GroundRequest: whether any message opens with
// Open WebUI's "### Task:" heading, and which messages are task prompts.
func classifyPrompts(msgs []compat.Message) (heading bool, prompts []bool) {
	prompts = make([]bool, len(msgs))
	for i, m := range msgs {
		head := promptHead(m.Text())
		heading = heading || strings.HasPrefix(head, taskPromptHeading)
		prompts[i] = promptTaskOf(head) != ""
	}
	return heading, prompts
}
