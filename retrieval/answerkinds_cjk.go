package retrieval

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Answer kinds in Japanese and Chinese, which write no spaces: a question asks for a kind by a phrase anywhere in
// it ("何年", "どのくらいの期間", "多久", "几天"), and a text states one by a number and the unit written right
// after it ("5年", "14日間", "30 天") or by a word of frequency ("毎日", "每周").

// cjkKinds is how one language written without spaces asks for kinds of answer and states them.
type cjkKinds struct {
	// Phrases that ask for each kind, the first that a question holds deciding (in this order: duration, size,
	// money, date, person, place, command, number: "ポートを開くには" asks how, "何番ポート" which number).
	duration, size, money, date, person, place, number, command []string
	// Units written after a number, and words that state a frequency.
	timeUnits, sizeUnits, moneyUnits, dateUnits, frequencies []string
}

var cjkKindLanguages = map[string]*cjkKinds{
	"ja": {
		duration: []string{"何年", "何日", "何時間", "何分", "何秒", "何週", "何か月", "何ヶ月", "何カ月", "期間", "どのくらいかか",
			"どれくらいかか", "どのくらい続", "頻度", "どのくらいの間", "いつまで"},
		size:   []string{"容量", "サイズ", "何バイト", "何文字", "大きさ"},
		money:  []string{"いくら", "料金", "費用", "値段"},
		date:   []string{"いつ", "何月", "何曜日"},
		person: []string{"誰", "だれ"},
		place:  []string{"どこ"},
		number: []string{
			"いくつ", "何個", "何台", "何人", "何件", "何番", "何本", "何回", "どのくらい", "どれくらい", "最大", "最小", "ポート", "番号", "デフォルト値", "既定値",
		},
		command:     []string{"どうやって", "どうすれば", "どうしますか", "どうする", "方法", "するには", "には？", "コマンド"},
		timeUnits:   []string{"年", "日", "時間", "分", "秒", "週", "か月", "ヶ月", "カ月", "ケ月"},
		sizeUnits:   []string{"バイト", "文字", "キロバイト", "メガバイト", "ギガバイト", "kb", "mb", "gb", "tb", "kib", "mib", "gib"},
		moneyUnits:  []string{"円", "ドル", "ユーロ"},
		dateUnits:   []string{"月", "日", "曜日"},
		frequencies: []string{"毎日", "毎週", "毎月", "毎年", "毎時", "毎晩"},
	},
	"zh": {
		duration: []string{"多久", "多长时间", "多少时间", "几年", "几天", "几个小时", "几小时", "几分钟", "几秒", "几周", "几个月",
			"多少天", "多少年", "多频繁", "频率", "期限"},
		size:        []string{"多大", "大小", "容量", "多少字节"},
		money:       []string{"多少钱", "价格", "费用"},
		date:        []string{"什么时候", "何时", "哪天", "哪一年"},
		person:      []string{"谁"},
		place:       []string{"哪里", "哪儿", "在哪"},
		number:      []string{"多少", "几个", "最多", "最少", "端口", "编号", "默认值"},
		command:     []string{"如何", "怎么", "怎样", "命令", "方法"},
		timeUnits:   []string{"年", "天", "日", "小时", "分钟", "秒", "周", "星期", "个月"},
		sizeUnits:   []string{"字节", "字符", "kb", "mb", "gb", "tb", "kib", "mib", "gib"},
		moneyUnits:  []string{"元", "美元", "欧元"},
		dateUnits:   []string{"月", "日", "号"},
		frequencies: []string{"每天", "每周", "每月", "每年", "每小时", "每晚"},
	},
}

// cjkKindOf is the kind of answer a question in a language of cjkKindLanguages asks for.
func cjkKindOf(k *cjkKinds, question string) answerKind {
	q := strings.ToLower(norm.NFKC.String(question))
	for _, c := range []struct {
		phrases []string
		kind    answerKind
	}{{k.duration, kindDuration}, {k.size, kindSize}, {k.money, kindMoney}, {k.date, kindDate}, {k.person, kindPerson},
		{k.place, kindPlace}, {k.command, kindCommand}, {k.number, kindNumber}} {
		for _, p := range c.phrases {
			if strings.Contains(q, p) {
				return c.kind
			}
		}
	}
	return kindNone
}

// holdsKindCJK reports whether text, in a language of cjkKindLanguages, states an answer of kind kind: a number
// (in any width) and a unit of the kind after it, a space between them or none, or a word of frequency.
func holdsKindCJK(text string, kind answerKind, k *cjkKinds) bool {
	var units []string
	switch kind {
	case kindNumber:
		return strings.IndexFunc(text, unicode.IsDigit) >= 0
	case kindDuration:
		for _, f := range k.frequencies {
			if strings.Contains(text, f) {
				return true
			}
		}
		units = k.timeUnits
	case kindSize:
		units = k.sizeUnits
	case kindMoney:
		units = k.moneyUnits
	case kindDate:
		units = k.dateUnits
	default:
		return false
	}
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		i += n
		if !unicode.IsDigit(r) {
			continue
		}
		for i < len(text) {
			if r, n = utf8.DecodeRuneInString(text[i:]); !unicode.IsDigit(r) && r != '.' && r != ',' {
				break
			}
			i += n
		}
		rest := strings.TrimLeft(text[i:], " \u3000")
		rest = strings.ToLower(norm.NFKC.String(rest[:min(len(rest), 16)]))
		for _, u := range units {
			if strings.HasPrefix(rest, u) {
				return true
			}
		}
	}
	return false
}
