package progress

// Page names a screen of learn's app: the page a [Place] is on. The values
// are saved (the "page" of the resume place), so they are part of the
// schema of the progress file.
type Page string

// The pages.
const (
	PageHome   Page = "home"   // the home menu
	PageReader Page = "reader" // a lesson or interview page; Name is its slug
	PagePlay   Page = "play"   // a scenario played; Name is the scenario, Variant its design
	PagePicker Page = "picker" // the list of scenarios
	PageRace   Page = "race"   // N copies of one request at once
	PageQuiz   Page = "quiz"   // a quiz set; Name is its ID, Step the question
	PageDrill  Page = "drill"  // the interview drill; Step the prompt, past the last the flashcards
	PageLab    Page = "lab"    // the design lab
	// PageExercises is learn exercises' screen: the learner's own
	// BookTicket, checked live.
	PageExercises Page = "exercises"
	// PageWorkshop is the presenter's dashboard of a workshop.
	PageWorkshop Page = "workshop"
)

// Place is one place in learn's app: a page, what it shows, and where on
// it. It is the one identity of a screen: the app opens a Place, every
// page says the Place it stands at, the progress file saves one to resume
// at, and a workshop compares them to know who is where. A Place is a
// value: two are the same place when they are ==.
//
// Which fields a page uses, and what they hold:
//
//   - Name: the lesson page's slug (PageReader), the scenario's name
//     (PagePlay), the set's ID (PageQuiz);
//   - Variant: the design a scenario is played in (PagePlay), "correct" or
//     "broken" (package sim's Variant); empty is correct;
//   - Section: the section of a lesson page, by its title (PageReader);
//   - Step: the question, counted from 0 (PageQuiz); the spoken prompt,
//     counted from 0, or the number of prompts for the flashcards
//     (PageDrill).
//
// The others are empty. The zero Place names no place: learn starts at
// home.
type Place struct {
	Page    Page   `json:"page"`
	Name    string `json:"name,omitempty"`
	Variant string `json:"variant,omitempty"`
	Section string `json:"section,omitempty"`
	Step    int    `json:"step,omitempty"`
}

// IsZero reports whether p names no place.
func (p Place) IsZero() bool { return p == Place{} }
