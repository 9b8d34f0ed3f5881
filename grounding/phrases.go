package grounding

import (
	"slices"
	"strings"

	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/textnorm"
)

// phrases are ragproxy's own texts in one language: the words it writes itself around what the site says.
type phrases struct {
	sources      string // the heading of the Sources list
	dontKnow     string // the answer when retrieval found nothing sure
	closestPages string // what follows dontKnow when there are pages to offer
	noPassage    string // an offline answer's opening when no passage answers directly
	alsoSays     string // before an offline answer's further quotes
	offlineNote  string // the closing line of an offline answer
}

// phrasesByLang holds the languages ragproxy speaks, by ISO 639-1 code; English is the default.
var phrasesByLang = map[string]phrases{
	"en": {
		sources:      "Sources",
		dontKnow:     "I don't know: I couldn't find this in the site's pages.",
		closestPages: " These pages are the closest I found:\n",
		noPassage:    "No passage answers this directly; the closest:\n",
		alsoSays:     "\nThe site also says:\n",
		offlineNote:  "\n_No language model is configured, so this answer quotes the site's pages._\n",
	},
	"de": {
		sources:      "Quellen",
		dontKnow:     "Ich weiß es nicht: Ich habe dazu nichts auf den Seiten der Website gefunden.",
		closestPages: " Diese Seiten kommen der Frage am nächsten:\n",
		noPassage:    "Keine direkte Antwort; am nächsten kommen diese:\n",
		alsoSays:     "\nDie Website sagt außerdem:\n",
		offlineNote:  "\n_Es ist kein Sprachmodell eingerichtet, daher zitiert diese Antwort die Seiten der Website._\n",
	},
	"fr": {
		sources:      "Sources",
		dontKnow:     "Je ne sais pas : je n'ai rien trouvé à ce sujet dans les pages du site.",
		closestPages: " Voici les pages les plus proches :\n",
		noPassage:    "Pas de réponse directe ; les plus proches :\n",
		alsoSays:     "\nLe site indique aussi :\n",
		offlineNote:  "\n_Aucun modèle de langage n'est configuré : cette réponse cite les pages du site._\n",
	},
	"es": {
		sources:      "Fuentes",
		dontKnow:     "No lo sé: no encontré esto en las páginas del sitio.",
		closestPages: " Estas son las páginas más cercanas:\n",
		noPassage:    "Ninguna respuesta directa; lo más cercano:\n",
		alsoSays:     "\nEl sitio también dice:\n",
		offlineNote:  "\n_No hay ningún modelo de lenguaje configurado, así que esta respuesta cita las páginas del sitio._\n",
	},
	"it": {
		sources:      "Fonti",
		dontKnow:     "Non lo so: non ho trovato nulla al riguardo nelle pagine del sito.",
		closestPages: " Queste sono le pagine più vicine:\n",
		noPassage:    "Nessuna risposta diretta; i passi più vicini:\n",
		alsoSays:     "\nIl sito dice anche:\n",
		offlineNote:  "\n_Non è configurato alcun modello linguistico, quindi questa risposta cita le pagine del sito._\n",
	},
	"pt": {
		sources:      "Fontes",
		dontKnow:     "Não sei: não encontrei isso nas páginas do site.",
		closestPages: " Estas são as páginas mais próximas:\n",
		noPassage:    "Nenhuma resposta direta; os trechos mais próximos:\n",
		alsoSays:     "\nO site também diz:\n",
		offlineNote:  "\n_Nenhum modelo de linguagem está configurado, por isso esta resposta cita as páginas do site._\n",
	},
	"ru": {
		sources:      "Источники",
		dontKnow:     "Не знаю: я не нашёл этого на страницах сайта.",
		closestPages: " Вот самые близкие страницы:\n",
		noPassage:    "Прямого ответа нет; ближайшие фрагменты:\n",
		alsoSays:     "\nНа сайте также сказано:\n",
		offlineNote:  "\n_Языковая модель не настроена, поэтому этот ответ цитирует страницы сайта._\n",
	},
	"ja": {
		sources:      "出典",
		dontKnow:     "わかりません：サイトのページに該当する情報が見つかりませんでした。",
		closestPages: "最も近いページは次のとおりです：\n",
		noPassage:    "直接答えている箇所はありません。最も近い箇所：\n",
		alsoSays:     "\nサイトには次の記載もあります：\n",
		offlineNote:  "\n_言語モデルが設定されていないため、この回答はサイトのページを引用しています。_\n",
	},
	"ca": {
		sources:      "Fonts",
		dontKnow:     "No ho sé: no he trobat això a les pàgines del lloc.",
		closestPages: " Aquestes són les pàgines més properes:\n",
		noPassage:    "Res no hi respon directament; el més proper:\n",
		alsoSays:     "\nEl lloc també diu:\n",
		offlineNote:  "\n_No hi ha cap model de llenguatge configurat, així que aquesta resposta cita les pàgines del lloc._\n",
	},
	"id": {
		sources:      "Sumber",
		dontKnow:     "Saya tidak tahu: saya tidak menemukan hal ini di halaman situs.",
		closestPages: " Halaman-halaman ini yang paling mendekati:\n",
		noPassage:    "Tidak ada jawaban langsung; yang paling mendekati:\n",
		alsoSays:     "\nSitus ini juga menyebutkan:\n",
		offlineNote:  "\n_Tidak ada model bahasa yang dikonfigurasi, jadi jawaban ini mengutip halaman situs._\n",
	},
	"nl": {
		sources:      "Bronnen",
		dontKnow:     "Ik weet het niet: ik heb hier niets over gevonden op de pagina's van de site.",
		closestPages: " Deze pagina's komen het dichtst in de buurt:\n",
		noPassage:    "Geen direct antwoord; het dichtst bij:\n",
		alsoSays:     "\nDe site zegt ook:\n",
		offlineNote:  "\n_Er is geen taalmodel ingesteld, dus dit antwoord citeert de pagina's van de site._\n",
	},
	"sv": {
		sources:      "Källor",
		dontKnow:     "Jag vet inte: jag hittade inget om detta på webbplatsens sidor.",
		closestPages: " De här sidorna ligger närmast:\n",
		noPassage:    "Inget direkt svar; närmast kommer:\n",
		alsoSays:     "\nWebbplatsen säger också:\n",
		offlineNote:  "\n_Ingen språkmodell är konfigurerad, så det här svaret citerar webbplatsens sidor._\n",
	},
	"no": { // Norwegian Bokmål, which "nb" (and "nn") tags are read as
		sources:      "Kilder",
		dontKnow:     "Jeg vet ikke: jeg fant ingenting om dette på nettstedets sider.",
		closestPages: " Disse sidene er nærmest:\n",
		noPassage:    "Ingen direkte svar; nærmest kommer:\n",
		alsoSays:     "\nNettstedet sier også:\n",
		offlineNote:  "\n_Ingen språkmodell er satt opp, så dette svaret siterer nettstedets sider._\n",
	},
	"da": {
		sources:      "Kilder",
		dontKnow:     "Jeg ved det ikke: jeg fandt intet om dette på webstedets sider.",
		closestPages: " Disse sider kommer nærmest:\n",
		noPassage:    "Intet direkte svar; nærmest kommer:\n",
		alsoSays:     "\nWebstedet siger også:\n",
		offlineNote:  "\n_Der er ikke sat nogen sprogmodel op, så dette svar citerer webstedets sider._\n",
	},
	"pl": {
		sources:      "Źródła",
		dontKnow:     "Nie wiem: nie znalazłem tego na stronach witryny.",
		closestPages: " Te strony są najbliższe:\n",
		noPassage:    "Brak bezpośredniej odpowiedzi; najbliższe:\n",
		alsoSays:     "\nWitryna podaje też:\n",
		offlineNote:  "\n_Nie skonfigurowano modelu językowego, więc ta odpowiedź cytuje strony witryny._\n",
	},
	"ar": {
		sources:      "المصادر",
		dontKnow:     "لا أعرف: لم أجد هذا في صفحات الموقع.",
		closestPages: " هذه أقرب الصفحات التي وجدتها:\n",
		noPassage:    "لا يوجد مقطع يجيب عن هذا مباشرة؛ الأقرب:\n",
		alsoSays:     "\nويذكر الموقع أيضًا:\n",
		offlineNote:  "\n_لم يُضبط أي نموذج لغوي، لذا تقتبس هذه الإجابة صفحات الموقع._\n",
	},
	"fa": {
		sources:      "منابع",
		dontKnow:     "نمی‌دانم: این را در صفحه‌های وب‌سایت پیدا نکردم.",
		closestPages: " نزدیک‌ترین صفحه‌هایی که پیدا کردم:\n",
		noPassage:    "هیچ بخشی مستقیماً به این پاسخ نمی‌دهد؛ نزدیک‌ترین‌ها:\n",
		alsoSays:     "\nوب‌سایت همچنین می‌گوید:\n",
		offlineNote:  "\n_هیچ مدل زبانی پیکربندی نشده است، پس این پاسخ از صفحه‌های وب‌سایت نقل می‌کند._\n",
	},
	"zh": { // Simplified Chinese
		sources:      "来源",
		dontKnow:     "我不知道：在本网站的页面中没有找到相关内容。",
		closestPages: "最接近的页面如下：\n",
		noPassage:    "没有直接回答的段落。最接近的内容：\n",
		alsoSays:     "\n网站还提到：\n",
		offlineNote:  "\n_未配置语言模型，因此本回答引用了网站的页面。_\n",
	},
}

// spokenLanguages are the languages of phrasesByLang, in a fixed order, English first: the default a question
// falls to when its language is not sure (textnorm.DetectQuestion reads among[0] so).
var spokenLanguages = func() []string {
	out := make([]string, 0, len(phrasesByLang))
	for lang := range phrasesByLang {
		if lang != "en" {
			out = append(out, lang)
		}
	}
	slices.Sort(out)
	return append([]string{"en"}, out...)
}()

// SpokenLanguages returns the languages ragproxy writes its own texts in (ISO 639-1), English first: the default
// a question falls to when textnorm.DetectQuestion is not sure of its language among them.
func SpokenLanguages() []string { return slices.Clone(spokenLanguages) }

// replyLanguage is the language ragproxy writes its own texts in, and asks the model to answer in, for res: the
// question's language as retrieval read it among the site's (res.Lang); but when that is English, as it is for
// every question on an English site, the language the question is surely written in among those ragproxy
// analyses (textnorm.DetectQuestion, whose stopword and script rules told none of the 367 English dev and
// held-out questions as another language). A German visitor of an English site gets "Quellen" and an answer in
// German; a Norwegian one, whose language ragproxy has no texts in, an answer in Norwegian around English texts
// rather than texts in the closest language it speaks.
func replyLanguage(res *retrieval.Result) string {
	if !textnorm.IsEnglish(res.Lang) || res.Query == "" {
		return res.Lang
	}
	if lang, ok := textnorm.DetectQuestion(res.Query, replyCandidates); ok {
		return lang
	}
	return res.Lang
}

// replyCandidates are the languages a question on an English site may be told as, English first (the default).
var replyCandidates = textnorm.Analysed()

// phrasesFor returns the texts in lang (any BCP 47 tag), English for a language ragproxy does not speak.
func phrasesFor(lang string) phrases {
	b := textnorm.Base(lang)
	if l := textnorm.LanguageOf(lang); l != nil {
		b = l.Tag() // "nb" and "nn" are Norwegian, "no"
	}
	if p, ok := phrasesByLang[b]; ok {
		return p
	}
	return phrasesByLang["en"]
}

// sourcesHeadings are the Sources list's openings in every language, for finding the list in an answer.
func sourcesHeadings() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range phrasesByLang {
		h := "\n\n**" + p.sources + "**\n"
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// answerLanguageRule is the grounding prompt's rule for a question in lang: none for English, whose prompt
// stays as it was; else to answer in the question's language.
func answerLanguageRule(lang string) string {
	if textnorm.IsEnglish(lang) {
		return ""
	}
	name := retrieval.LanguageName(lang)
	return "- The question is in " + name + ": answer in " + name + ", whatever the language of the context."
}

// withRule inserts rule as the last of the prompt's rules, before its context; prompt as it is for "".
func withRule(prompt, rule string) string {
	if rule == "" {
		return prompt
	}
	const fence = "\n\n<context>\n"
	i := strings.Index(prompt, fence)
	if i < 0 {
		return prompt + "\n" + rule
	}
	return prompt[:i] + "\n" + rule + prompt[i:]
}
